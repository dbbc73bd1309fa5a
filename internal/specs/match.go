package specs

import (
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Matching rules (a device is matched to at most one record):
//
//  1. PCI id: an exact "vvvv:dddd" (any case) among a record's PCIIDs, for a
//     record that states a datasheet figure.
//  2. Name: the printed name is normalised (lower case; "(R)", "(TM)"
//     dropped; every character outside [a-z0-9] is a separator; vendor and
//     brand words and form-factor words in noiseWords are dropped) and the
//     remaining set of words must EQUAL the word set of the record's name or
//     one of its Aliases. Set
//     equality, not substring: "NVIDIA GeForce RTX 4080 SUPER" is not an
//     "RTX 4080", "NVIDIA L40S" is not an "L40", "NVIDIA H100 NVL" is not an
//     H100 SXM5.
//  3. Memory check (ForDevice only): when the record gives the part's memory
//     (not a maximum) and the device reports its total memory, a device whose
//     memory is outside [0.85, 1.15] x the record's is a different SKU sold
//     under the same name (RTX 3060 8 GB, Arc A770 8 GB) and is not matched,
//     unless the record says MemoryVaries.
//
// Records whose names are ambiguous by themselves (NameAmbiguous: "Apple M3
// Max", "Apple M4 Max", two bins with different bandwidth) are never matched
// by name.

// noiseWords carry no identity: vendor and brand names, "graphics", and the
// OAM form factor (MI300X and MI250X come only as OAM).
var noiseWords = map[string]bool{
	"nvidia": true, "geforce": true, "tesla": true, "amd": true, "ati": true,
	"radeon": true, "instinct": true, "intel": true, "habana": true,
	"google": true, "cloud": true, "tpu": true, "apple": true, "aws": true,
	"amazon": true, "qualcomm": true, "corporation": true, "inc": true,
	"graphics": true, "oam": true, "r": true, "tm": true, "labs": true,
}

// byWords maps a normalised word set to a record index; built once, over the
// records that state a datasheet figure.
var byWords = buildIndex()

func buildIndex() map[string]int {
	idx := map[string]int{}
	add := func(alias string, i int) {
		k := Normalize(alias)
		if k == "" {
			return
		}
		if j, ok := idx[k]; ok && j != i {
			panic("specs: alias " + alias + " names two records")
		}
		idx[k] = i
	}
	for i, s := range records {
		if s.NameAmbiguous || !s.hasFigures() {
			continue
		}
		add(s.Name, i)
		for _, a := range s.Aliases {
			add(a, i)
		}
	}
	return idx
}

// Normalize returns the matching key of a printed name: its identity words,
// sorted and joined by single spaces ("NVIDIA H100 80GB HBM3" → "80gb h100
// hbm3").
func Normalize(name string) string {
	s := strings.ToLower(name)
	s = strings.NewReplacer("(r)", " ", "(tm)", " ", "®", " ", "™", " ").Replace(s)
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var kept []string
	seen := map[string]bool{}
	for _, w := range words {
		if noiseWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		kept = append(kept, w)
	}
	sort.Strings(kept)
	return strings.Join(kept, " ")
}

// Lookup finds the record for a printed device name (rule 2).
func Lookup(name string) (Spec, bool) {
	i, ok := byWords[Normalize(name)]
	if !ok {
		return Spec{}, false
	}
	return records[i], true
}

// LookupPCIID finds the datasheet record for a "vvvv:dddd" PCI id (rule 1);
// an identity-only record (no figure) is not a datasheet.
func LookupPCIID(id string) (Spec, bool) {
	s, ok := ByPCIID(id)
	if !ok || !s.hasFigures() {
		return Spec{}, false
	}
	return s, true
}

// ForDevice finds the record for a detected device: by PCI id (a board of a
// shared id by its memory, ByPCIIDMemory), else by name,
// and rejects a match whose memory size says it is another SKU (rule 3).
func ForDevice(d *registry.Device) (Spec, bool) {
	s, ok := memoryVariant(d.PCIID, d.MemoryBytes)
	if !ok {
		s, ok = LookupPCIID(d.PCIID)
	}
	if !ok {
		s, ok = Lookup(d.Name)
	}
	if !ok {
		return Spec{}, false
	}
	if !memoryAgrees(s, d.MemoryBytes) {
		return Spec{}, false
	}
	return s, true
}

func memoryAgrees(s Spec, deviceBytes int64) bool {
	if deviceBytes <= 0 || s.MemoryBytes <= 0 || s.MemoryIsMaximum || s.MemoryVaries {
		return true
	}
	r := float64(deviceBytes) / float64(s.MemoryBytes)
	return r >= 0.85 && r <= 1.15
}
