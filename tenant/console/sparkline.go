package console

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size of a sparkline's view box; the style sheet sets the size it is drawn at.
const sparkWidth, sparkHeight = 120.0, 28.0

// spark is a small chart drawn on the server as an SVG path, so the page needs no chart
// script and stays within the CSP (no inline style: the style sheet colours it).
type spark struct {
	// Path is the SVG path data, empty when there are fewer than two values to join.
	Path string
	// Label names the range drawn, for screen readers and the tooltip.
	Label string
}

// sparkline draws values from left to right, 0 at the bottom and the largest value at the
// top; a NaN leaves a gap.
func sparkline(values []float64, format func(float64) string) spark {
	top, finite := 0.0, 0
	for _, v := range values {
		if !math.IsNaN(v) {
			top, finite = max(top, v), finite+1
		}
	}
	if len(values) < 2 || finite == 0 {
		return spark{Label: "not enough samples yet"}
	}
	highest := top
	if top == 0 {
		top = 1
	}
	var b strings.Builder
	pen := false
	for i, v := range values {
		if math.IsNaN(v) {
			pen = false
			continue
		}
		x := float64(i) * sparkWidth / float64(len(values)-1)
		y := sparkHeight - 1 - v/top*(sparkHeight-2)
		op := "L"
		if !pen {
			op = "M"
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(op + num(x) + "," + num(y))
		pen = true
	}
	return spark{Path: b.String(), Label: fmt.Sprintf("last %d samples, highest %s", len(values), format(highest))}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
