package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// streamMaxLen bounds each tenant's stream (approximately, as XADD's ~
// trimming does): an audit trail meant to be kept longer belongs in the
// JSON-lines file or a log pipeline reading the stream.
const streamMaxLen = 100_000

// Stream keeps records in one Redis stream per tenant
// (`plasmd:{tenant}:audit`, the tenant's hash slot like its sessions), so
// every replica on the same Redis appends to and reads the same trail.
// Seq is a per-tenant counter in Redis.
type Stream struct {
	rdb redis.UniversalClient
	now func() time.Time
}

// NewStream returns a Log over rdb.
func NewStream(rdb redis.UniversalClient) *Stream { return &Stream{rdb: rdb, now: time.Now} }

func streamKey(tenant string) string { return "plasmd:{" + tenant + "}:audit" }

// Append implements Log: it stamps Seq and (when zero) Time, then adds the
// record to the tenant's stream.
func (s *Stream) Append(ctx context.Context, rec Record) error {
	seq, err := s.rdb.Incr(ctx, streamKey(rec.Tenant)+":seq").Result()
	if err != nil {
		return fmt.Errorf("audit stream: %w", err)
	}
	rec.Seq = seq
	if rec.Time.IsZero() {
		rec.Time = s.now().UTC()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	if err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: streamKey(rec.Tenant), MaxLen: streamMaxLen, Approx: true, Values: []any{"r", b}}).Err(); err != nil {
		return fmt.Errorf("audit stream: %w", err)
	}
	return nil
}

// List implements Log: the tenant's most recent records (a principal's
// only, when set), oldest first.
func (s *Stream) List(ctx context.Context, tenant, principal string, limit int) ([]Record, error) {
	var out []Record
	end := "+"
	const batch = 500
	for limit <= 0 || len(out) < limit {
		msgs, err := s.rdb.XRevRangeN(ctx, streamKey(tenant), end, "-", batch).Result()
		if err != nil {
			return nil, fmt.Errorf("audit stream: %w", err)
		}
		for _, m := range msgs {
			raw, _ := m.Values["r"].(string)
			var rec Record
			if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Tenant != tenant {
				continue
			}
			if principal == "" || rec.Principal == principal {
				out = append(out, rec)
				if limit > 0 && len(out) == limit {
					break
				}
			}
		}
		if len(msgs) < batch {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Tee appends to every log and lists from the first (the shared one, when
// a file keeps a local copy beside a Redis stream).
type Tee []Log

// Append implements Log; the first error wins, every log is tried.
func (t Tee) Append(ctx context.Context, rec Record) error {
	var first error
	for _, l := range t {
		if err := l.Append(ctx, rec); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// List implements Log from the first log.
func (t Tee) List(ctx context.Context, tenant, principal string, limit int) ([]Record, error) {
	return t[0].List(ctx, tenant, principal, limit)
}
