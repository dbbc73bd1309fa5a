// Package rent answers "what should I rent to run this model": a catalog of
// rentable machine types (catalog.json, one record per type, every figure
// with the page it was read from), each planned by the real planner
// (internal/plan) on a registry built from the part table (internal/specs),
// and ranked by cost per million output tokens, price or speed.
//
// Nothing here reads the network: the catalog is embedded, and a user's
// price file is bytes the caller read.
package rent

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// catalogJSON is the built-in catalog. Its sources (docs/rent.md lists them):
// SkyPilot's public catalog CSVs (github.com/skypilot-org/skypilot-catalog,
// catalogs/v8/{aws,lambda,oci}/vms.csv at the commits named per record),
// which carry the providers' own price and instance figures; the
// datareceipts 109-gpu-pricing pages (AWS, Azure, RunPod, read 2026-11-09
// by their author); the silybench-data gpu_prices.csv (Lambda, RunPod,
// checked 2026-09-25); and dstack pull requests quoting `dstack offer`
// (AWS p5en, GCP G4).
//
//go:embed catalog.json
var catalogJSON []byte

// StaleAfter is how old a built-in price may be before an answer warns
// that it may have changed.
const StaleAfter = 180 * 24 * time.Hour

// dateLayout is the layout of every date in a catalog or price file.
const dateLayout = "2006-01-02"

// Catalog is a set of machine types (the built-in catalog or a user's
// price file: the same shape).
type Catalog struct {
	// Schema is the file's version, read as any integer member is
	// (schema/rent-request.schema.json states no range; it is kept, not
	// checked).
	Schema   strictjson.Int `json:"schema"`
	Machines []Machine      `json:"machines"`
}

// Machine is one rentable machine type.
type Machine struct {
	Provider string `json:"provider"`
	Type     string `json:"type"`
	Region   string `json:"region,omitempty"`
	// Part is the name of a part record (internal/specs ByName): the
	// devices' memory and bandwidth come from there, so they have one home.
	Part  string `json:"part,omitempty"`
	Count int    `json:"count,omitempty"`
	// ScaleUp is the link between the machine's accelerators: nvswitch,
	// nvlink, xgmi, pcie; empty for one accelerator.
	ScaleUp string   `json:"scale_up,omitempty"`
	Network *Network `json:"network,omitempty"`
	VCPUs   int      `json:"vcpus,omitempty"`
	// HostMemoryGiB is the host RAM (0: no page read says).
	HostMemoryGiB float64 `json:"host_memory_gib,omitempty"`
	// Published is what the source page states about the accelerators, kept
	// to check the part chosen against it (catalog_test.go).
	Published *Published `json:"published,omitempty"`
	Price     *Price     `json:"price,omitempty"`
	Note      string     `json:"note,omitempty"`

	// priceFromUser marks a price a user's price file replaced.
	priceFromUser bool
}

// Network is the network between nodes of a type: only a type with one can
// be planned over several nodes.
type Network struct {
	// Kind: efa, infiniband, roce.
	Kind   string  `json:"kind"`
	GbitS  float64 `json:"gbit_s"`
	Source string  `json:"source"`
}

// Published is the accelerator count and per-accelerator memory as the
// source page states them, in the page's unit (MiB, GiB or GB).
type Published struct {
	GPUs      int     `json:"gpus"`
	GPUMemory float64 `json:"gpu_memory"`
	Unit      string  `json:"unit"`
	Source    string  `json:"source"`
}

// Price is an on-demand price: Seen is the date the page states for it
// (the day it was read when the page states none), Read the day it was
// read, Source the page.
type Price struct {
	USDPerHour float64 `json:"usd_per_hour"`
	Seen       string  `json:"seen"`
	Read       string  `json:"read,omitempty"`
	Source     string  `json:"source"`
}

// Key names a machine type across catalogs.
func (m *Machine) Key() string { return strings.ToLower(m.Provider) + "/" + m.Type }

// Builtin returns the built-in catalog (a fresh copy each call).
func Builtin() (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(catalogJSON, &c); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "built-in rent catalog")
	}
	return &c, nil
}

// ParsePrices decodes a user's price file: the catalog's shape, where each
// machine names a provider and type of the catalog and gives a price.
// Unknown keys are refused (a typo must not be silently ignored).
func ParsePrices(b []byte) (*Catalog, error) {
	var c Catalog
	if err := strictjson.Decode(b, &c, "prices"); err != nil {
		return nil, err
	}
	for i, m := range c.Machines {
		if m.Provider == "" || m.Type == "" {
			return nil, errs.New(errs.InvalidArgument, "prices: machines[%d] needs provider and type", i)
		}
		if m.Price == nil || !(m.Price.USDPerHour > 0) {
			return nil, errs.New(errs.InvalidArgument, "prices: %s needs price.usd_per_hour > 0", m.Key())
		}
		if m.Price.Seen != "" {
			if _, err := time.Parse(dateLayout, m.Price.Seen); err != nil {
				return nil, errs.New(errs.InvalidArgument, "prices: %s: seen %q is not a date (YYYY-MM-DD)", m.Key(), m.Price.Seen)
			}
		}
	}
	return &c, nil
}

// WithPrices returns c with the prices of user replacing the built-in ones,
// type by type; each replaced price is marked as the user's. A type the
// catalog does not hold is an error naming it.
func (c *Catalog) WithPrices(user *Catalog) (*Catalog, error) {
	out := &Catalog{Schema: c.Schema, Machines: append([]Machine(nil), c.Machines...)}
	index := map[string]int{}
	for i := range out.Machines {
		index[out.Machines[i].Key()] = i
	}
	for _, u := range user.Machines {
		i, ok := index[u.Key()]
		if !ok {
			return nil, errs.New(errs.InvalidArgument, "prices: %s is not in the catalog (known: %s)", u.Key(), strings.Join(c.keys(), ", "))
		}
		p := *u.Price
		if p.Source == "" {
			p.Source = "user price file"
		}
		out.Machines[i].Price = &p
		out.Machines[i].priceFromUser = true
	}
	return out, nil
}

func (c *Catalog) keys() []string {
	var ks []string
	for i := range c.Machines {
		ks = append(ks, c.Machines[i].Key())
	}
	sort.Strings(ks)
	return ks
}

// priceAge is how long before now the price was seen; ok is false when the
// price has no readable date.
func priceAge(p *Price, now time.Time) (time.Duration, bool) {
	if p == nil || p.Seen == "" {
		return 0, false
	}
	t, err := time.Parse(dateLayout, p.Seen)
	if err != nil {
		return 0, false
	}
	return now.Sub(t), true
}

// staleWarning is the warning for a built-in price seen more than
// StaleAfter before now ("" when fresh or given by the user).
func staleWarning(m *Machine, now time.Time) string {
	if m.priceFromUser {
		return ""
	}
	age, ok := priceAge(m.Price, now)
	if !ok || age <= StaleAfter {
		return ""
	}
	return fmt.Sprintf("%s: the built-in price $%.2f/h was seen %s, %d days ago; it may have changed (give current prices with a price file)",
		m.Key(), m.Price.USDPerHour, m.Price.Seen, int(age.Hours()/24))
}
