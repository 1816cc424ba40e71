package plan

import "strconv"

// Computes: steps the host runs over rows it already holds (data plumbing
// like sort and limit, never backend calls). Each needs the whole input
// list to mean what the program says.

// Node operations added for computed values.
const (
	// OpText yields one row {content: Args["content"]}: a string or
	// heredoc bound on its own (note = <<EOF … EOF).
	OpText = "text"
)

// Compute transform kinds.
const (
	TAggregate = "aggregate" // one row of Aggs over all input rows
	TGroupBy   = "group_by"  // one row per distinct Field value, with Aggs
	TDerive    = "derive"    // one output row per input row, columns Derive
	TRender    = "render"    // one row {content}: Template over the rows
	TSingleton = "singleton" // the input must hold exactly one row
	TDedupe    = "dedupe"    // the first row per distinct value of Fields
)

// Aggregate functions.
const (
	AggCount = "count"
	AggSum   = "sum"
	AggAvg   = "avg"
	AggMin   = "min"
	AggMax   = "max"
)

// ContentColumn is the single column of rendered text and text bindings.
const ContentColumn = "content"

// Agg is one aggregate column: Name = Fn(Field); Field is empty for count.
type Agg struct {
	Name  string `json:"name"`
	Fn    string `json:"fn"`
	Field string `json:"field,omitempty"`
}

// Derived is one derived column: the input row's Field, or Value when
// Field is empty.
type Derived struct {
	Name  string `json:"name"`
	Field string `json:"field,omitempty"`
	Value any    `json:"value"`
}

// EachRow fills a per-row mutation's variables from its input row.
type EachRow struct {
	Binds []Bind `json:"binds"`
}

// RowRef, as an ArgTemplate reference's Node, reads the current input row
// of an EachRow mutation (`${_.field}` inside an effect).
const RowRef = -1

// ArgTemplate fills Var with Parts interleaved with the text of Refs:
// Parts[0] Refs[0] Parts[1] … Parts[len(Refs)]. A reference reads Field
// of node Node's single row, or of the current row when Node is RowRef.
type ArgTemplate struct {
	Var   string   `json:"var"`
	Parts []string `json:"parts"`
	Refs  []ArgRef `json:"refs"`
}

// SemiJoin names the rows whose keys admit an input row.
type SemiJoin struct {
	Node  int    `json:"node"`
	Field string `json:"field"` // on the input rows
	Key   string `json:"key"`   // on node Node's rows
}

// IsCompute reports whether a transform reshapes rows into new columns.
func IsCompute(kind string) bool {
	switch kind {
	case TAggregate, TGroupBy, TDerive, TRender:
		return true
	}
	return false
}

func (t *Transform) appendComputeJSON(b []byte) []byte {
	if len(t.Aggs) > 0 {
		b = append(b, `,"aggs":`...)
		b = appendList(b, t.Aggs, false, func(a *Agg, b []byte) []byte {
			b = append(b, `{"name":`...)
			b = appendString(b, a.Name)
			b = append(b, `,"fn":`...)
			b = appendString(b, a.Fn)
			b = optString(b, "field", a.Field)
			return append(b, '}')
		})
	}
	if len(t.Derive) > 0 {
		b = append(b, `,"derive":`...)
		b = appendList(b, t.Derive, false, func(d *Derived, b []byte) []byte {
			b = append(b, `{"name":`...)
			b = appendString(b, d.Name)
			b = optString(b, "field", d.Field)
			b = append(b, `,"value":`...)
			b = appendValue(b, d.Value)
			return append(b, '}')
		})
	}
	return optString(b, "template", t.Template)
}

func (n *Node) appendComputeJSON(b []byte) []byte {
	if n.EachRow != nil {
		b = append(b, `,"each_row":{"binds":`...)
		b = appendList(b, n.EachRow.Binds, true, (*Bind).appendJSON)
		b = append(b, '}')
	}
	if s := n.Semi; s != nil {
		b = append(b, `,"semi":{"node":`...)
		b = strconv.AppendInt(b, int64(s.Node), 10)
		b = append(b, `,"field":`...)
		b = appendString(b, s.Field)
		b = append(b, `,"key":`...)
		b = appendString(b, s.Key)
		b = append(b, '}')
	}
	if n.PageSize != 0 {
		b = append(b, `,"page_size":`...)
		b = strconv.AppendInt(b, int64(n.PageSize), 10)
	}
	if len(n.Templates) > 0 {
		b = append(b, `,"templates":`...)
		b = appendList(b, n.Templates, false, func(t *ArgTemplate, b []byte) []byte {
			b = append(b, `{"var":`...)
			b = appendString(b, t.Var)
			b = append(b, `,"parts":`...)
			if t.Parts == nil {
				b = append(b, "null"...)
			} else {
				b = appendStrings(b, t.Parts)
			}
			b = append(b, `,"refs":`...)
			b = appendList(b, t.Refs, true, func(r *ArgRef, b []byte) []byte {
				b = append(b, `{"var":`...)
				b = appendString(b, r.Var)
				b = append(b, `,"node":`...)
				b = strconv.AppendInt(b, int64(r.Node), 10)
				b = append(b, `,"field":`...)
				b = appendString(b, r.Field)
				return append(b, '}')
			})
			return append(b, '}')
		})
	}
	return b
}
