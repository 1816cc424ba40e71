// Package tracing gives plasmd's runs OpenTelemetry spans: one per run,
// its plan, each executed step, each backend call and each guest call
// (compile, decode). The logical session is the trace's root identity
// (seed 001): every run of one logical session lands in one trace whose id
// is the session's UUID, so an operator finds an agent's whole
// conversation by the id the console shows. Spans are exported over
// OTLP/HTTP only when an endpoint is configured; by default the tracer is
// a no-op and runs still carry the (derived) trace id.
package tracing

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
	"github.com/plasmd/plasmd/internal/runtime/egress"
	"github.com/plasmd/plasmd/internal/runtime/executor"
)

// Scope is the instrumentation scope name of plasmd's spans.
const Scope = "github.com/plasmd/plasmd/server"

// ErrEndpoint is returned for an unusable --otlp-endpoint.
var ErrEndpoint = errors.New("bad OTLP endpoint")

// OTLP returns a tracer provider exporting over OTLP/HTTP to endpoint (a
// collector such as http://127.0.0.1:4318, or a full URL ending in
// /v1/traces). Call Shutdown on exit to flush.
func OTLP(ctx context.Context, endpoint string) (*sdktrace.TracerProvider, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w %q: want http(s)://host:port", ErrEndpoint, endpoint)
	}
	// A bare collector address gets the standard traces path, as with
	// OTEL_EXPORTER_OTLP_ENDPOINT; a URL with a path is used as given.
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName("plasmd"))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Tracer starts plasmd's spans. The zero value and a nil *Tracer trace
// nothing and cost (almost) nothing: wrappers are not installed at all.
type Tracer struct {
	tr trace.Tracer
}

// New returns a tracer on tp (nil: tracing off).
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return &Tracer{}
	}
	return &Tracer{tr: tp.Tracer(Scope)}
}

func (t *Tracer) on() bool { return t != nil && t.tr != nil }

func (t *Tracer) tracer() trace.Tracer {
	if !t.on() {
		return noop.NewTracerProvider().Tracer(Scope)
	}
	return t.tr
}

// Engine wraps e with guest-call spans, or returns it as is when off.
func (t *Tracer) Engine(e executor.Engine) executor.Engine {
	if !t.on() {
		return e
	}
	return tracedEngine{Inner: e, T: t}
}

// Sender wraps s with backend-call spans, or returns it as is when off.
func (t *Tracer) Sender(s executor.Sender) executor.Sender {
	if !t.on() {
		return s
	}
	return tracedSender{Inner: s, T: t}
}

// StepHook is executor.Env.OnStep: nil when off.
func (t *Tracer) StepHook() func(context.Context, *plan.Node) (context.Context, func(executor.Step, error)) {
	if !t.on() {
		return nil
	}
	return t.Step
}

// SessionTraceID is the trace id of a logical (or, for HTTP runs, execute)
// session: its UUID's 16 bytes, or a hash of any other id.
func SessionTraceID(sessionID string) trace.TraceID {
	if u, err := uuid.Parse(sessionID); err == nil {
		return trace.TraceID(u)
	}
	h := sha256.Sum256([]byte(sessionID))
	var id trace.TraceID
	copy(id[:], h[:16])
	return id
}

// sessionParent makes the session the remote parent of a run's span, so
// every run of the session shares its trace.
func sessionParent(ctx context.Context, sessionID string) context.Context {
	h := sha256.Sum256([]byte("plasmd-session-root\x00" + sessionID))
	var sid trace.SpanID
	copy(sid[:], h[:8])
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: SessionTraceID(sessionID), SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// RunInfo names a run for its span. No program text or secrets: programs
// can carry personal data in literals.
type RunInfo struct {
	Tenant, LogicalID, SessionID string
}

// Span is an open span; End closes it with the outcome. With tracing off
// it has no span, only the trace id the run would have had.
type Span struct {
	s       trace.Span
	traceID trace.TraceID
}

// End records err (if any) and ends the span.
func (s Span) End(err error) {
	if s.s == nil {
		return
	}
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, errKind(err))
	}
	s.s.End()
}

// SetRunID names the stored run once it exists.
func (s Span) SetRunID(id string) {
	if s.s != nil {
		s.s.SetAttributes(attribute.String("plasmd.run_id", id))
	}
}

// TraceID is the run's trace id, as hex.
func (s Span) TraceID() string {
	if s.s == nil {
		return s.traceID.String()
	}
	return s.s.SpanContext().TraceID().String()
}

// Run starts a run's span under its session's trace.
func (t *Tracer) Run(ctx context.Context, ri RunInfo) (context.Context, Span) {
	root := ri.LogicalID
	if root == "" {
		root = ri.SessionID
	}
	if !t.on() {
		return ctx, Span{traceID: SessionTraceID(root)}
	}
	ctx = sessionParent(ctx, root)
	ctx, s := t.tracer().Start(ctx, "plasmd.run", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("plasmd.tenant", ri.Tenant),
		attribute.String("plasmd.logical_session_id", ri.LogicalID),
		attribute.String("plasmd.execute_session_id", ri.SessionID),
	))
	return ctx, Span{s: s}
}

// Plan starts the span of planning a program (a guest call).
func (t *Tracer) Plan(ctx context.Context) (context.Context, Span) {
	if !t.on() {
		return ctx, Span{}
	}
	ctx, s := t.tracer().Start(ctx, "plasmd.plan")
	return ctx, Span{s: s}
}

// PlanCached records a plan answered from the plan cache (no guest call).
func (t *Tracer) PlanCached(ctx context.Context) {
	if !t.on() {
		return
	}
	_, s := t.tracer().Start(ctx, "plasmd.plan", trace.WithAttributes(attribute.Bool("plasmd.plan_cached", true)))
	s.End()
}

// Step starts the span of one plan node; it is executor.Env.OnStep.
func (t *Tracer) Step(ctx context.Context, n *plan.Node) (context.Context, func(executor.Step, error)) {
	ctx, s := t.tracer().Start(ctx, "plasmd.step "+n.Op, trace.WithAttributes(
		attribute.Int("plasmd.node", n.ID),
		attribute.String("plasmd.op", n.Op),
		attribute.String("plasmd.entry_id", n.EntryID),
		attribute.String("plasmd.entity", n.Entity),
		attribute.String("plasmd.capability", n.Capability),
	))
	return ctx, func(st executor.Step, err error) {
		s.SetAttributes(attribute.Int("plasmd.calls", st.Calls), attribute.Int("plasmd.rows", st.Rows))
		Span{s: s}.End(err)
	}
}

// errKind is a short, secret-free status description.
func errKind(err error) string {
	var ae *abi.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	var be *executor.BackendError
	if errors.As(err, &be) {
		return "backend"
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "canceled"
	}
	return "error"
}

// tracedEngine wraps a tenant's engine so each guest call gets a span.
type tracedEngine struct {
	Inner executor.Engine
	T     *Tracer
}

// Compile implements executor.Engine.
func (e tracedEngine) Compile(ctx context.Context, req *abi.CompileRequest) (*abi.CompiledRequest, error) {
	ctx, s := e.T.tracer().Start(ctx, "plasmd.guest compile", trace.WithAttributes(attribute.String("plasmd.capability", req.Capability)))
	out, err := e.Inner.Compile(ctx, req)
	Span{s: s}.End(err)
	return out, err
}

// Decode implements executor.Engine.
func (e tracedEngine) Decode(ctx context.Context, req *abi.DecodeRequest, body []byte) (*abi.DecodeResponse, error) {
	ctx, s := e.T.tracer().Start(ctx, "plasmd.guest decode", trace.WithAttributes(
		attribute.String("plasmd.capability", req.Capability), attribute.Int("plasmd.body_bytes", len(body))))
	out, err := e.Inner.Decode(ctx, req, body)
	Span{s: s}.End(err)
	return out, err
}

// tracedSender wraps the egress sender so each backend call gets a client span.
// Only the method, host and path are recorded: queries and headers can
// carry credentials.
type tracedSender struct {
	Inner executor.Sender
	T     *Tracer
}

// Do implements executor.Sender.
func (s tracedSender) Do(ctx context.Context, req *abi.CompiledRequest, allowed []egress.Origin, secrets egress.Secrets) (*egress.Response, error) {
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method)}
	if u, err := url.Parse(req.URL); err == nil {
		attrs = append(attrs, attribute.String("server.address", u.Host), attribute.String("url.path", u.Path))
	}
	ctx, sp := s.T.tracer().Start(ctx, "plasmd.backend "+req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	resp, err := s.Inner.Do(ctx, req, allowed, secrets)
	if resp != nil {
		sp.SetAttributes(attribute.Int("http.response.status_code", resp.Status))
	}
	Span{s: sp}.End(err)
	return resp, err
}
