package console

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// graphNode is a box in a drawn graph.
type graphNode struct {
	ID    string
	Label string
	Sub   string // second line (kind, capability)
	Href  string // link target, "" for none
	Class string // extra CSS class (e.g. "write", "failed")
}

// graphEdge is an arrow between two nodes by id.
type graphEdge struct {
	From, To string
	Label    string
}

// Box geometry in SVG user units.
const (
	boxW, boxH = 180, 46
	gapX, gapY = 90, 28
	margin     = 20
)

// point is a box's top-left corner.
type point struct{ X, Y float64 }

// drawGraph renders nodes at the given positions (top-left corners) as an
// SVG element. Edges leave and enter at box borders; bend > 0 curves them
// so that A→B and B→A stay apart. Everything is drawn with presentation
// attributes and classes styled by console.css, so it needs no inline style
// and passes the strict CSP.
func drawGraph(title string, nodes []graphNode, at []point, edges []graphEdge, bend float64) template.HTML {
	idx := map[string]int{}
	w, h := 0.0, 0.0
	for i, n := range nodes {
		idx[n.ID] = i
		w = math.Max(w, at[i].X+boxW+margin)
		h = math.Max(h, at[i].Y+boxH+margin)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`, w, h, w, h)
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>`)
	loops := map[string]int{}
	var labels strings.Builder
	for _, e := range edges {
		fi, ok1 := idx[e.From]
		ti, ok2 := idx[e.To]
		if !ok1 || !ok2 {
			continue
		}
		b.WriteString(`<g class="edge">`)
		var lx, ly float64
		if fi == ti {
			k := float64(loops[e.From])
			loops[e.From]++
			x, y := at[fi].X+boxW-24-k*16, at[fi].Y
			fmt.Fprintf(&b, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"/>`, x, y, x-10, y-26-k*8, x+30, y-26-k*8, x+20, y)
			lx, ly = x+10, y-30-k*8
		} else {
			lx, ly = edgePath(&b, at[fi], at[ti], bend)
		}
		b.WriteString(`</g>`)
		if e.Label != "" {
			// Labels go on top of the boxes, drawn after them.
			fmt.Fprintf(&labels, `<text x="%.1f" y="%.1f" text-anchor="middle" class="edge-label">%s</text>`, lx, ly, html.EscapeString(e.Label))
		}
	}
	for i, n := range nodes {
		p := at[i]
		cls := "node"
		if n.Class != "" {
			cls += " " + n.Class
		}
		if n.Href != "" {
			fmt.Fprintf(&b, `<a href="%s">`, html.EscapeString(n.Href))
		}
		fmt.Fprintf(&b, `<g class="%s" data-id="%s"><rect x="%.1f" y="%.1f" width="%d" height="%d" rx="6"/>`, html.EscapeString(cls), html.EscapeString(n.ID), p.X, p.Y, boxW, boxH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" class="node-label">%s</text>`, p.X+boxW/2, p.Y+19, html.EscapeString(clip(n.Label, 24)))
		if n.Sub != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" class="node-sub">%s</text>`, p.X+boxW/2, p.Y+36, html.EscapeString(clip(n.Sub, 28)))
		}
		b.WriteString(`</g>`)
		if n.Href != "" {
			b.WriteString(`</a>`)
		}
	}
	b.WriteString(labels.String())
	b.WriteString(`</svg>`)
	// Every piece of text above went through html.EscapeString.
	return template.HTML(b.String()) //nolint:gosec // built from escaped parts
}

// edgePath draws a (possibly bent) edge between two boxes and returns
// where its label goes.
func edgePath(b *strings.Builder, from, to point, bend float64) (lx, ly float64) {
	fx, fy := from.X+boxW/2, from.Y+boxH/2
	tx, ty := to.X+boxW/2, to.Y+boxH/2
	dx, dy := tx-fx, ty-fy
	d := math.Hypot(dx, dy)
	// Control point: the midpoint pushed sideways (to the left of the
	// direction of travel), so opposite edges curve apart.
	mx, my := (fx+tx)/2-dy/d*bend, (fy+ty)/2+dx/d*bend
	x1, y1 := border(fx, fy, mx, my)
	x2, y2 := border(tx, ty, mx, my)
	fmt.Fprintf(b, `<path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"/>`, x1, y1, mx, my, x2, y2)
	// The curve's midpoint is halfway between the chord and the control.
	return (x1+x2)/4 + mx/2, (y1+y2)/4 + my/2 - 3
}

// border is where the ray from a box centre (cx, cy) towards (px, py)
// leaves the box.
func border(cx, cy, px, py float64) (float64, float64) {
	dx, dy := px-cx, py-cy
	if dx == 0 && dy == 0 {
		return cx, cy
	}
	t := math.Inf(1)
	if dx != 0 {
		t = math.Min(t, (boxW/2)/math.Abs(dx))
	}
	if dy != 0 {
		t = math.Min(t, (boxH/2)/math.Abs(dy))
	}
	return cx + dx*t, cy + dy*t
}

// columnLayout places node i in column col[i], stacked in order.
func columnLayout(col []int) []point {
	rows := map[int]int{}
	out := make([]point, len(col))
	for i, c := range col {
		out[i] = point{float64(margin + c*(boxW+gapX)), float64(margin + rows[c]*(boxH+gapY))}
		rows[c]++
	}
	return out
}

// circleLayout places n nodes evenly on a circle large enough that
// neighbours' boxes do not touch.
func circleLayout(n int) []point {
	if n == 1 {
		return []point{{margin, margin + 30}}
	}
	r := math.Max(140, float64(n)*(boxW+40)/(2*math.Pi))
	cx, cy := margin+r+boxW/2, margin+40+r*0.6+boxH/2
	out := make([]point, n)
	for i := range out {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		// An ellipse (flatter than tall) suits wide boxes and screens.
		out[i] = point{cx + r*math.Cos(a) - boxW/2, cy + r*0.6*math.Sin(a) - boxH/2}
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
