// Package plugins registers shapes by name.
package plugins

// Shape is what every plugin provides.
type Shape interface {
	Area() float64
}

// Square is a plugin.
type Square struct{ Side float64 }

// Area of the square.
func (s Square) Area() float64 { return s.Side * s.Side }

// Circle is a plugin.
type Circle struct{ R float64 }

// Area of the circle.
func (c Circle) Area() float64 { return 3 * c.R * c.R }

var registry = map[string]func() Shape{}

// Register adds a plugin.
func Register(name string, f func() Shape) { registry[name] = f }

// NewShape builds the shape named kind.
func NewShape(kind string) Shape {
	switch kind {
	case "square":
		return Square{Side: 1}
	default:
		return Circle{R: 1}
	}
}
