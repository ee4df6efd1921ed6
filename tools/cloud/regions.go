package cloud

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// derivedRegion prices a region from a base region's table: the providers' regional prices
// differ from the base by a nearly uniform factor, so one published price per region (the
// reference type's) carries the region's price level without shipping a full table per region.
type derivedRegion struct {
	Base      string   `json:"base"`            // "aws/us-east-1"
	Reference string   `json:"reference"`       // the type whose published price gives the factor
	Price     float64  `json:"price"`           // the reference type's published $/h in this region
	Lacks     []string `json:"lacks,omitempty"` // instance families the region does not offer
	// Published prices of this region replace the scaled ones: where the factor is known to
	// miss (a license priced the same everywhere, a service priced apart from compute).
	Published *regionPrices `json:"published,omitempty"`
}

// derive adds the derived regions to pt.Regions.
func (pt *PriceTable) derive() error {
	// A base region lists over a thousand classes: their families are found once, not once a
	// region (the regular expression was most of a load's time).
	families := map[string]string{}
	familyOf := func(class string) string {
		f, ok := families[class]
		if !ok {
			if m := familyRE.FindStringSubmatch(strings.TrimPrefix(class, "db.")); m != nil {
				f = m[1]
			}
			families[class] = f
		}
		return f
	}
	for key, d := range pt.Derived {
		base, ok := pt.Regions[d.Base]
		if !ok {
			return fmt.Errorf("region %s: base region %s not in the table", key, d.Base)
		}
		ref, ok := base.InstanceHourly[d.Reference]
		if !ok || ref <= 0 || d.Price <= 0 {
			return fmt.Errorf("region %s: reference type %s has no price in %s or here", key, d.Reference, d.Base)
		}
		f := d.Price / ref
		offered := func(class string) bool {
			return len(d.Lacks) == 0 || !slices.Contains(d.Lacks, familyOf(class))
		}
		var p regionPrices
		out := p.flat()
		for name, m := range base.flat() {
			*out[name] = scaled(*m, f, offered, pt.SameEverywhere)
		}
		nested := p.nested()
		for name, m := range base.nested() {
			*nested[name] = map[string]map[string]float64{}
			for group, classes := range *m {
				if slices.Contains(pt.SameEverywhere, group) {
					(*nested[name])[group] = maps.Clone(classes)
					continue
				}
				(*nested[name])[group] = scaled(classes, f, offered, nil)
			}
		}
		// The reference type's price is the one published here, not the base's scaled and
		// rounded.
		p.InstanceHourly[d.Reference] = d.Price
		if d.Published != nil {
			d.Published.each(p.set)
		}
		pt.Regions[key] = p
	}
	return nil
}

// scaled returns m's prices times f, rounded to the precision of a published price, leaving
// out the keys keep rejects and leaving the keys in flat as they are.
func scaled(m map[string]float64, f float64, keep func(string) bool, flat []string) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		switch {
		case keep != nil && !keep(k):
		case slices.Contains(flat, k):
			out[k] = v
		default:
			out[k] = roundSignificant(v*f, 4)
		}
	}
	return out
}

// roundSignificant rounds v to n significant digits, as the price lists state prices.
func roundSignificant(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	scale := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}
