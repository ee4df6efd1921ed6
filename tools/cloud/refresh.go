package cloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// PriceObservation is one list price read from a provider's price file.
type PriceObservation struct {
	Region string // provider/region, as the table names it: "aws/us-east-2"
	Table  string // the table's JSON name: "instanceHourly", "databaseHourly", ...
	Group  string // in a two-level table, the engine or kind: "postgres-flexible"
	Key    string // the type, class, tier or SKU
	Price  float64
	Source string // the file or API it was read from: "Azure Retail Prices API"
	Since  string // the date the price took effect, or the file was published
	// Complete is set when the file lists every type of Table offered in Region: a base
	// region's table then takes the types it lacks and drops those the file does not list.
	Complete bool
}

// RegionRefresh is what a refresh did to one region's prices.
type RegionRefresh struct {
	Confirmed  int      // prices the files give as the table had them
	Changed    []string // "instanceHourly t3.micro 0.0104 -> 0.0105"
	Unknown    []string // prices of things the table does not list there, left out
	Added      []string // "instanceHourly x8g.large": listed by a complete file, new to the table
	Removed    []string // "instanceHourly m1.small": not in a complete file's list, taken out
	NotInTable bool     // the region itself is not in the table: nothing was written
}

// Refresh writes observed prices into pt, which must be a table as ReadPriceTable returns it.
// Only prices of what the table lists in that region (once derived) are written: into the
// table of a base region, and under published for a derived region, whose reference price is
// updated too; but a complete list of a base region's types (PriceObservation.Complete)
// replaces the region's table, so that the table lists what the region offers. Each region
// written is named under Verified with its sources, the prices they gave and the date they
// were read.
func (pt *PriceTable) Refresh(obs []PriceObservation, date string) (map[string]*RegionRefresh, error) {
	full, err := pt.derived()
	if err != nil {
		return nil, err
	}
	report := map[string]*RegionRefresh{}
	written := map[string]*verification{}
	listed := map[[2]string]map[string]bool{} // base region and table -> the types a complete file lists
	for _, o := range obs {
		if report[o.Region] == nil {
			report[o.Region] = &RegionRefresh{}
		}
		rr := report[o.Region]
		view, ok := full.Regions[o.Region]
		if !ok {
			rr.NotInTable = true
			continue
		}
		_, isBase := pt.Regions[o.Region]
		listing := o.Complete && isBase && o.Group == ""
		key, known := view.match(o.Table, o.Group, o.Key)
		if !known && !listing {
			rr.Unknown = append(rr.Unknown, strings.TrimPrefix(o.Group+" "+o.Key, " ")+" ("+o.Table+")")
			continue
		}
		if !known {
			key = o.Key
		}
		if listing {
			lt := [2]string{o.Region, o.Table}
			if listed[lt] == nil {
				listed[lt] = map[string]bool{}
			}
			listed[lt][key] = true
		}
		name := o.Table + " " + strings.TrimPrefix(o.Group+" "+key, " ")
		switch old, _ := view.lookup(o.Table, o.Group, key); {
		case !known:
			rr.Added = append(rr.Added, name)
		case old == o.Price:
			rr.Confirmed++
		default:
			rr.Changed = append(rr.Changed, fmt.Sprintf("%s %g -> %g", name, old, o.Price))
		}
		if isBase {
			base := pt.Regions[o.Region]
			base.set(o.Table, o.Group, key, o.Price)
			pt.Regions[o.Region] = base
		} else {
			d := pt.Derived[o.Region]
			if o.Table == "instanceHourly" && key == d.Reference {
				d.Price = o.Price
			} else {
				if d.Published == nil {
					d.Published = &regionPrices{}
				}
				d.Published.set(o.Table, o.Group, key, o.Price)
			}
			pt.Derived[o.Region] = d
		}
		if written[o.Region] == nil {
			written[o.Region] = &verification{since: map[string][]string{}}
		}
		written[o.Region].add(o, name)
	}
	for lt, keys := range listed {
		base := pt.Regions[lt[0]]
		m, ok := base.flat()[lt[1]]
		if !ok {
			continue
		}
		for k := range *m {
			if !keys[k] {
				delete(*m, k)
				report[lt[0]].Removed = append(report[lt[0]].Removed, lt[1]+" "+k)
			}
		}
	}
	for region, v := range written {
		if pt.Verified == nil {
			pt.Verified = map[string]string{}
		}
		pt.Verified[region] = v.String() + "; read " + date
	}
	if _, err := pt.derived(); err != nil {
		return nil, err
	}
	return report, nil
}

// verification gathers what a refresh wrote into one region, for its Verified note.
type verification struct {
	since  map[string][]string // source -> the dates of its prices
	prices []string
}

func (v *verification) add(o PriceObservation, name string) {
	if !slices.Contains(v.since[o.Source], o.Since) {
		v.since[o.Source] = append(v.since[o.Source], o.Since)
	}
	if !slices.Contains(v.prices, name) {
		v.prices = append(v.prices, name)
	}
}

// verifiedNames is how many prices a Verified note names before it counts the rest.
const verifiedNames = 8

func (v *verification) String() string {
	var parts []string
	for src, dates := range v.since {
		slices.Sort(dates)
		parts = append(parts, src+", effective "+strings.Join(dates, ", "))
	}
	slices.Sort(parts)
	slices.Sort(v.prices)
	names := strings.Join(v.prices[:min(len(v.prices), verifiedNames)], ", ")
	if n := len(v.prices) - verifiedNames; n > 0 {
		names += fmt.Sprintf(" and %d more", n)
	}
	return strings.Join(parts, "; ") + ": " + names
}

// derived returns a copy of pt with its derived regions priced.
func (pt *PriceTable) derived() (*PriceTable, error) {
	b, err := json.Marshal(pt)
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	return readDerived(b)
}

// match finds key in the named table, ignoring case (the price files write B1MS where the
// declarations write B1ms), and returns the table's spelling.
func (p *regionPrices) match(table, group, key string) (string, bool) {
	if _, ok := p.lookup(table, group, key); ok {
		return key, true
	}
	var found string
	p.each(func(t, g, k string, _ float64) {
		if t == table && g == group && strings.EqualFold(k, key) {
			found = k
		}
	})
	return found, found != ""
}

// Encode writes pt as prices.json stores it: two-space indentation, and every object or array
// that fits on a line of 120 columns on one line, price maps wrapped over as many lines as
// they need, so that the file stays readable and a refresh shows as a small diff.
func (pt *PriceTable) Encode() ([]byte, error) {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(pt); err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	dec := json.NewDecoder(&raw)
	dec.UseNumber()
	root, err := readNode(dec)
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	var out bytes.Buffer
	root.write(&out, 0)
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// node is a JSON value that keeps its members' order.
type node struct {
	scalar string // the encoded scalar; "" for an object or array
	array  bool
	keys   []string // encoded keys of an object's members
	items  []*node
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		b, err := marshalScalar(tok)
		return &node{scalar: string(b)}, err
	}
	n := &node{array: d == '['}
	for dec.More() {
		if !n.array {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			b, err := marshalScalar(k)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, string(b))
		}
		item, err := readNode(dec)
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, item)
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return nil, err
	}
	return n, nil
}

func marshalScalar(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

const encodeWidth = 120

// members returns the members of an object or array as they are written inline.
func (n *node) members() []string {
	out := make([]string, len(n.items))
	for i, it := range n.items {
		out[i] = it.inline()
		if !n.array {
			out[i] = n.keys[i] + ": " + out[i]
		}
	}
	return out
}

func (n *node) inline() string {
	if n.scalar != "" {
		return n.scalar
	}
	open, close := "{", "}"
	if n.array {
		open, close = "[", "]"
	}
	return open + strings.Join(n.members(), ", ") + close
}

func (n *node) write(w io.Writer, indent int) {
	pad := strings.Repeat("  ", indent)
	if s := n.inline(); n.scalar != "" || len(pad)+len(s) <= encodeWidth {
		io.WriteString(w, s)
		return
	}
	open, close := "{", "}"
	if n.array {
		open, close = "[", "]"
	}
	io.WriteString(w, open+"\n")
	inner := pad + "  "
	if n.flat() {
		// Scalars only (a price map): as many members a line as fit.
		line := ""
		for i, m := range n.members() {
			if i < len(n.items)-1 {
				m += ","
			}
			if line != "" && len(inner)+len(line)+1+len(m) > encodeWidth {
				io.WriteString(w, inner+line+"\n")
				line = ""
			}
			line = strings.TrimPrefix(line+" "+m, " ")
		}
		io.WriteString(w, inner+line+"\n"+pad+close)
		return
	}
	for i, it := range n.items {
		io.WriteString(w, inner)
		if !n.array {
			io.WriteString(w, n.keys[i]+": ")
		}
		it.write(w, indent+1)
		if i < len(n.items)-1 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "\n")
	}
	io.WriteString(w, pad+close)
}

func (n *node) flat() bool {
	for _, it := range n.items {
		if it.scalar == "" {
			return false
		}
	}
	return true
}
