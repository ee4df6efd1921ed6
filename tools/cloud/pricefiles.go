package cloud

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// errNoPrices is returned by a reader that found no price it understands in a file.
var errNoPrices = errors.New("no on-demand price the table uses in this file")

// awsOffer is the part of an AWS Price List bulk offer file (offers/v1.0/aws/AmazonEC2/...
// /index.json) that on-demand prices need.
type awsOffer struct {
	OfferCode       string `json:"offerCode"`
	Version         string `json:"version"`
	PublicationDate string `json:"publicationDate"`
	Products        map[string]struct {
		ProductFamily string            `json:"productFamily"`
		Attributes    map[string]string `json:"attributes"`
	} `json:"products"`
	Terms struct {
		OnDemand map[string]map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
			TermAttributes map[string]string `json:"termAttributes"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// ReadAWSOffer reads the EC2 prices the table uses from an AWS Price List bulk offer file:
// shared-tenancy Linux instances without pre-installed software or license, by the hour, and
// EBS volumes by the GB-month, in USD.
func ReadAWSOffer(r io.Reader) ([]PriceObservation, error) {
	var offer awsOffer
	if err := json.NewDecoder(r).Decode(&offer); err != nil {
		return nil, fmt.Errorf("read an AWS offer file: %w", err)
	}
	source := fmt.Sprintf("AWS Price List offer file %s version %s", offer.OfferCode, offer.Version)
	published, _, _ := strings.Cut(offer.PublicationDate, "T")
	var out []PriceObservation
	for sku, p := range offer.Products {
		a := p.Attributes
		var table, key, unit string
		switch {
		case p.ProductFamily == "Compute Instance" && a["operatingSystem"] == "Linux" && a["tenancy"] == "Shared" &&
			a["preInstalledSw"] == "NA" && a["licenseModel"] == "No License required" &&
			(a["capacitystatus"] == "" || a["capacitystatus"] == "Used"):
			table, key, unit = "instanceHourly", a["instanceType"], "Hrs"
		case p.ProductFamily == "Storage" && a["volumeApiName"] != "":
			table, key, unit = "blockStorageGBMonth", a["volumeApiName"], "GB-Mo"
		default:
			continue
		}
		if a["regionCode"] == "" {
			continue // offer files before 2020 name regions only by their display name
		}
		for _, term := range offer.Terms.OnDemand[sku] {
			if len(term.TermAttributes) > 0 || len(term.PriceDimensions) != 1 {
				continue // a reservation's terms, or a price in several parts
			}
			for _, dim := range term.PriceDimensions {
				price, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
				if dim.Unit != unit || err != nil {
					continue
				}
				out = append(out, PriceObservation{Region: "aws/" + a["regionCode"], Table: table, Key: key, Price: price, Source: source, Since: published})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read an AWS offer file: %w", errNoPrices)
	}
	return out, nil
}

// azureRetailPage is one page of the Azure Retail Prices API
// (prices.azure.com/api/retail/prices).
type azureRetailPage struct {
	Items []struct {
		CurrencyCode       string  `json:"currencyCode"`
		RetailPrice        float64 `json:"retailPrice"`
		ArmRegionName      string  `json:"armRegionName"`
		EffectiveStartDate string  `json:"effectiveStartDate"`
		MeterName          string  `json:"meterName"`
		ProductName        string  `json:"productName"`
		SkuName            string  `json:"skuName"`
		ServiceName        string  `json:"serviceName"`
		UnitOfMeasure      string  `json:"unitOfMeasure"`
		Type               string  `json:"type"`
		ArmSkuName         string  `json:"armSkuName"`
	} `json:"Items"`
}

// flexibleTier maps the tier words of Azure Database flexible server compute products to the
// prefix of the SKU names declarations use (B_Standard_B1ms).
var flexibleTier = map[string]string{"Burstable": "B_Standard_", "General Purpose": "GP_Standard_", "Memory Optimized": "MO_Standard_"}

// ReadAzureRetailPrices reads the prices the table uses from a page of the Azure Retail Prices
// API: pay-as-you-go virtual machines (Linux, and Windows with its license), LRS managed disk
// tiers, and PostgreSQL flexible server compute and storage, in USD.
func ReadAzureRetailPrices(r io.Reader) ([]PriceObservation, error) {
	var page azureRetailPage
	if err := json.NewDecoder(r).Decode(&page); err != nil {
		return nil, fmt.Errorf("read an Azure Retail Prices page: %w", err)
	}
	var out []PriceObservation
	for _, it := range page.Items {
		if it.Type != "Consumption" || it.CurrencyCode != "USD" || strings.Contains(it.MeterName, "Spot") || strings.Contains(it.MeterName, "Low Priority") {
			continue
		}
		since, _, _ := strings.Cut(it.EffectiveStartDate, "T")
		o := PriceObservation{Region: "azurerm/" + it.ArmRegionName, Price: it.RetailPrice, Source: "Azure Retail Prices API", Since: since}
		switch {
		case it.ServiceName == "Virtual Machines" && it.UnitOfMeasure == "1 Hour" && it.ArmSkuName != "":
			o.Table, o.Key = "instanceHourly", it.ArmSkuName
			if strings.HasSuffix(it.ProductName, " Windows") {
				o.Table = "windowsInstanceHourly"
			}
		case strings.HasSuffix(it.ProductName, "SSD Managed Disks") || it.ProductName == "Standard HDD Managed Disks":
			tier, ok := strings.CutSuffix(it.MeterName, " LRS Disk")
			if !ok || it.UnitOfMeasure != "1/Month" {
				continue
			}
			o.Table, o.Key = "managedDiskMonthly", tier
		case it.ServiceName == "Azure Database for PostgreSQL" && strings.Contains(it.ProductName, "Flexible Server"):
			o.Group = "postgres-flexible"
			if strings.HasSuffix(it.ProductName, "Flexible Server Storage") && it.MeterName == "Storage Data Stored" {
				o.Table, o.Key = "databaseStorageGBMonth", o.Group
				o.Group = ""
				break
			}
			prefix := ""
			for words, p := range flexibleTier {
				if strings.Contains(it.ProductName, words) {
					prefix = p
				}
			}
			if prefix == "" || it.UnitOfMeasure != "1 Hour" {
				continue
			}
			o.Table, o.Key = "databaseHourly", prefix+strings.ReplaceAll(it.MeterName, " ", "_")
		default:
			continue
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read an Azure Retail Prices page: %w", errNoPrices)
	}
	return out, nil
}

// googleSKUs is one page of the Cloud Billing Catalog API's services.skus.list for Compute
// Engine (cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus).
type googleSKUs struct {
	SKUs []struct {
		Description string `json:"description"`
		Category    struct {
			UsageType string `json:"usageType"`
		} `json:"category"`
		ServiceRegions []string `json:"serviceRegions"`
		PricingInfo    []struct {
			EffectiveTime     string `json:"effectiveTime"`
			PricingExpression struct {
				UsageUnit   string `json:"usageUnit"`
				TieredRates []struct {
					UnitPrice struct {
						CurrencyCode string `json:"currencyCode"`
						Units        string `json:"units"`
						Nanos        int64  `json:"nanos"`
					} `json:"unitPrice"`
				} `json:"tieredRates"`
			} `json:"pricingExpression"`
		} `json:"pricingInfo"`
	} `json:"skus"`
}

var (
	// googleComponent matches the on-demand vCPU and memory SKUs of a machine family
	// ("N1 Predefined Instance Core running in Americas", "E2 Instance Ram running in
	// Iowa"); custom, sole-tenant, preemptible and committed ones do not match.
	googleComponent = regexp.MustCompile(`^([A-Z][A-Z0-9]*) (?:Predefined )?Instance (Core|Ram) running in `)
	googleGPU       = regexp.MustCompile(`^Nvidia Tesla ([A-Z0-9]+) GPU running in `)
	// googleMachine names a predefined machine type: family, shape, vCPUs (a2-highgpu-1g counts
	// GPUs).
	googleMachine = regexp.MustCompile(`^([a-z][a-z0-9]*)-(standard|highmem|highcpu|highgpu|micro|small|medium)(?:-(\d+)g?)?$`)
)

// memoryPerVCPU is the GiB per vCPU of the predefined shapes, by family and shape.
var memoryPerVCPU = map[string]float64{
	"n1-standard": 3.75, "n1-highmem": 6.5, "n1-highcpu": 0.9,
	"n2-standard": 4, "n2-highmem": 8, "n2-highcpu": 1, "e2-standard": 4, "e2-highmem": 8, "e2-highcpu": 1,
}

// googleShape returns a machine type's vCPUs, memory in GiB and GPUs (A100s for A2), as
// Compute Engine bills them: e2-micro, -small and -medium are fractions of an E2 vCPU.
func googleShape(machine string) (family string, vcpus, gib, gpus float64, ok bool) {
	m := googleMachine.FindStringSubmatch(machine)
	if m == nil {
		return "", 0, 0, 0, false
	}
	n, _ := strconv.ParseFloat(m[3], 64)
	switch shape := m[1] + "-" + m[2]; {
	case shape == "e2-micro":
		return "e2", 0.25, 1, 0, true
	case shape == "e2-small":
		return "e2", 0.5, 2, 0, true
	case shape == "e2-medium":
		return "e2", 1, 4, 0, true
	case shape == "a2-highgpu" && n > 0:
		return "a2", 12 * n, 85 * n, n, true
	case memoryPerVCPU[shape] > 0 && n > 0:
		return m[1], n, n * memoryPerVCPU[shape], 0, true
	}
	return "", 0, 0, 0, false
}

// ReadGoogleSKUs reads a page of Compute Engine SKUs and prices from it the predefined
// machine types the table lists, in every region each SKU serves: vCPUs times the family's
// core price, plus memory times its RAM price, plus GPUs. table supplies the machine types;
// a type whose every component is not in the page is left out.
func ReadGoogleSKUs(r io.Reader, table *PriceTable) ([]PriceObservation, error) {
	var page googleSKUs
	if err := json.NewDecoder(r).Decode(&page); err != nil {
		return nil, fmt.Errorf("read a Google Cloud Billing catalog page: %w", err)
	}
	type component struct {
		price float64
		since string
	}
	parts := map[string]map[string]component{} // region -> "n1 Core", "a2 Ram", "gpu A100" -> price
	for _, s := range page.SKUs {
		if s.Category.UsageType != "OnDemand" || len(s.PricingInfo) == 0 {
			continue
		}
		var name string
		if m := googleComponent.FindStringSubmatch(s.Description); m != nil {
			name = strings.ToLower(m[1]) + " " + m[2]
		} else if m := googleGPU.FindStringSubmatch(s.Description); m != nil {
			name = "gpu " + m[1]
		} else {
			continue
		}
		info := s.PricingInfo[len(s.PricingInfo)-1]
		rates := info.PricingExpression.TieredRates
		if len(rates) == 0 || rates[len(rates)-1].UnitPrice.CurrencyCode != "USD" {
			continue
		}
		// The last tier is the rate past any free allowance.
		up := rates[len(rates)-1].UnitPrice
		units, _ := strconv.ParseFloat(up.Units, 64)
		since, _, _ := strings.Cut(info.EffectiveTime, "T")
		c := component{price: units + float64(up.Nanos)/1e9, since: since}
		for _, region := range s.ServiceRegions {
			if parts[region] == nil {
				parts[region] = map[string]component{}
			}
			parts[region][name] = c
		}
	}
	full, err := table.derived()
	if err != nil {
		return nil, err
	}
	var known []string // the machine types of the base regions, for a region the table lacks
	for key, p := range table.Regions {
		if strings.HasPrefix(key, "google/") {
			known = slices.AppendSeq(known, maps.Keys(p.InstanceHourly))
		}
	}
	var out []PriceObservation
	for region, have := range parts {
		machines := slices.Collect(maps.Keys(full.Regions["google/"+region].InstanceHourly))
		if _, ok := full.Regions["google/"+region]; !ok {
			machines = known
		}
		for _, machine := range machines {
			family, vcpus, gib, gpus, ok := googleShape(machine)
			if !ok {
				continue
			}
			core, ok1 := have[family+" Core"]
			ram, ok2 := have[family+" Ram"]
			gpu, ok3 := have["gpu A100"] // the GPU of the A2 family, the one family with GPUs built in
			if !ok1 || !ok2 || (gpus > 0 && !ok3) {
				continue
			}
			price := vcpus*core.price + gib*ram.price + gpus*gpu.price
			out = append(out, PriceObservation{Region: "google/" + region, Table: "instanceHourly", Key: machine,
				Price: roundSignificant(price, 10), Source: "Cloud Billing Catalog API, Compute Engine SKUs", Since: core.since})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read a Google Cloud Billing catalog page: %w", errNoPrices)
	}
	return out, nil
}

// karpenterTable describes one of the price tables Karpenter's cloud providers generate from
// their provider's price API and ship as Go source.
type karpenterTable struct {
	provider string // the price table's provider prefix: "aws"
	source   string
	// complete is set when the file lists every instance type of each region it covers, so
	// that a type it lacks is not offered there.
	complete bool
	// skip matches the sizes whose prices the file cannot be trusted for.
	skip *regexp.Regexp
}

// karpenterGenerated is the comment that dates a generated table.
var karpenterGenerated = regexp.MustCompile(`generated at (\d{4}-\d\d-\d\d)T`)

// ReadKarpenterAWS reads the on-demand prices karpenter-provider-aws generates from the AWS
// Pricing API (pkg/providers/pricing/zz_generated.pricing_aws.go): every EC2 instance type of
// a region, Linux, shared tenancy (dedicated for bare metal, which AWS sells only so), no
// pre-installed software, in USD per hour.
func ReadKarpenterAWS(r io.Reader) ([]PriceObservation, error) {
	return readKarpenter(r, karpenterTable{provider: "aws", complete: true,
		source: "karpenter-provider-aws generated price table (AWS Pricing API, EC2 on-demand Linux)"})
}

// azureAMDv5 matches the AMD v5 sizes (Standard_D2as_v5, Standard_E4ads_v5): their Windows
// meters pass karpenter-provider-azure's Linux filter, so its table gives some of them the
// Windows price (eastus Standard_D4as_v5 0.356, which is 0.172 for Linux plus 4 x 0.046 of
// license, beside Standard_D2as_v5 0.086).
var azureAMDv5 = regexp.MustCompile(`^Standard_[A-Z]+\d+a[a-z]*_v5$`)

// ReadKarpenterAzure reads the pay-as-you-go Linux virtual machine prices
// karpenter-provider-azure generates from the Azure Retail Prices API
// (pkg/providers/pricing/zz_generated.pricing.go), per region, in USD per hour, but for the AMD
// v5 sizes (azureAMDv5). The generator keeps one price per size and does not list every series
// (no Dv2), so the file is not a list of what a region offers.
func ReadKarpenterAzure(r io.Reader) ([]PriceObservation, error) {
	return readKarpenter(r, karpenterTable{provider: "azurerm", skip: azureAMDv5,
		source: "karpenter-provider-azure generated price table (Azure Retail Prices API, Linux virtual machines)"})
}

// readKarpenter parses a generated table as Go source, so that it is read by its syntax, not
// by its layout: a region's prices are the map literal that is the value of a region key
// (aws: map[region]map[type]price{...}) or is assigned to a region index (azure:
// prices["eastus"] = map[string]float64{...}).
func readKarpenter(r io.Reader, kt karpenterTable) ([]PriceObservation, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read a Karpenter price table: %w", err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("read a Karpenter price table: %w", err)
	}
	var since string
	for _, c := range f.Comments {
		if m := karpenterGenerated.FindStringSubmatch(c.Text()); m != nil {
			since = m[1]
		}
	}
	if since == "" {
		return nil, errors.New("read a Karpenter price table: no \"generated at\" date")
	}
	var out []PriceObservation
	var perr error
	region := func(key ast.Expr, value ast.Expr) bool {
		name, ok := stringLit(key)
		lit, isMap := value.(*ast.CompositeLit)
		if !ok || !isMap {
			return true
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			typ, ok1 := stringLit(kv.Key)
			num, ok2 := kv.Value.(*ast.BasicLit)
			if !ok1 || !ok2 || (num.Kind != token.FLOAT && num.Kind != token.INT) {
				continue
			}
			price, err := strconv.ParseFloat(num.Value, 64)
			if err != nil {
				perr = fmt.Errorf("read a Karpenter price table: %s %s: %w", name, typ, err)
				return false
			}
			if kt.skip != nil && kt.skip.MatchString(typ) {
				continue
			}
			out = append(out, PriceObservation{Region: kt.provider + "/" + name, Table: "instanceHourly", Key: typ,
				Price: price, Source: kt.source, Since: since, Complete: kt.complete})
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			return region(n.Key, n.Value)
		case *ast.AssignStmt:
			if len(n.Lhs) != 1 || len(n.Rhs) != 1 {
				break
			}
			if ix, ok := n.Lhs[0].(*ast.IndexExpr); ok {
				return region(ix.Index, n.Rhs[0])
			}
		}
		return perr == nil
	})
	if perr != nil {
		return nil, perr
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read a Karpenter price table: %w", errNoPrices)
	}
	return out, nil
}

// stringLit returns the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// karpenterGCPPrices is karpenter-provider-gcp's price table
// (pkg/providers/pricing/initial-prices.json): machine type prices per region.
type karpenterGCPPrices struct {
	Prices map[string]struct {
		OnDemand map[string]float64 `json:"on_demand"`
	} `json:"prices"`
}

// ReadKarpenterGCP reads the on-demand Compute Engine machine type prices of
// karpenter-provider-gcp's price table, which its weekly workflow refreshes from Cyclenerd's
// gcloud-compute.com machine type table (prices from the Cloud Billing catalog's SKUs) and
// checks against cloud.google.com's pricing pages. The file holds no date: since is the date
// of the commit that refreshed it.
func ReadKarpenterGCP(r io.Reader, since string) ([]PriceObservation, error) {
	var f karpenterGCPPrices
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("read karpenter-provider-gcp's price table: %w", err)
	}
	var out []PriceObservation
	for region, p := range f.Prices {
		for machine, price := range p.OnDemand {
			out = append(out, PriceObservation{Region: "google/" + region, Table: "instanceHourly", Key: machine, Price: price,
				Source: "karpenter-provider-gcp price table (gcloud-compute.com, from Cloud Billing SKUs)", Since: since})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read karpenter-provider-gcp's price table: %w", errNoPrices)
	}
	return out, nil
}
