package plan

import "fmt"

// LevelRow is one line of the per-level table of an answer.
type LevelRow struct {
	Quant      string `json:"quant"`
	TotalBytes int64  `json:"total_bytes"`
	// Fits is whether the level fits: FitUnknown (null in JSON) on every
	// row when no available device's memory is known (rowsWithoutDevices),
	// and on a row refused for memory, or too_few_devices where they make
	// up the number, beside devices of unknown memory (choice.levelRows).
	Fits     Fit    `json:"fits"`
	Strategy string `json:"strategy,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// pool is the pool a fitting row is planned on (nil otherwise), whose
	// engine counts the row's overhead and activations: TotalBytes grows
	// with precision among rows of one pool (TestPlanningProperties).
	pool *pool
	// wants is, for a row no pool fits, the fewest devices in all with
	// which one of its pools' refusals might be lifted (planned's
	// devicesWanted); 0 where no count of devices lifts any.
	wants int
	// unrun: no pool runs the level (each refused it as unsupported).
	unrun bool
}

// SuggestAnswer is the answer of hwaccel_suggest_quant.
type SuggestAnswer struct {
	// Quant is the level chosen; a refusal has none.
	Quant string `json:"quant,omitempty"`
	// Fits is whether a level fits: FitUnknown (null in JSON) when no
	// available device's memory is known, or devices of unknown memory
	// were left out of a refusal for memory (choice.fit).
	Fits    Fit        `json:"fits"`
	Devices []string   `json:"devices"`
	Memory  Memory     `json:"memory"`
	Levels  []LevelRow `json:"levels"`
	// Budget is the memory rule the choice was made on (budget.go).
	Budget *Budget `json:"budget,omitempty"`
	// Refusal says why no level fits (nil when one does).
	Refusal     *Refusal `json:"refusal,omitempty"`
	Explanation []string `json:"explanation"`
	Warnings    []string `json:"warnings"`
}

// SuggestQuant answers hwaccel_suggest_quant: the best level that fits the
// chosen devices, with the table of every level tried.
func SuggestQuant(r *Request) (*SuggestAnswer, error) {
	req, err := newPlanning(r)
	if err != nil {
		return nil, err
	}
	ch, err := choose(req)
	if err != nil {
		return nil, err
	}
	pl := &ch.Plan
	ans := &SuggestAnswer{Fits: ch.fit(), Devices: []string{}, Levels: ch.levelRows(),
		Explanation: explainChoice(ch), Warnings: modelWarnings(req), Budget: budgetOf(pl)}
	if ans.Levels == nil {
		ans.Levels = []LevelRow{}
	}
	if pl.Fits {
		ans.Quant = string(pl.Level)
		if w := unknownMemoryWarning(ch); w != "" {
			ans.Warnings = append(ans.Warnings, w)
		}
		held, maxBatch := pagedHeld(pl, req)
		for ri, r := range pl.replicas() {
			for _, s := range r {
				for _, d := range s.Devices {
					ans.Devices = append(ans.Devices, d.ID)
					ans.Memory.add(heldPart(s.Part, held, ri))
				}
			}
		}
		ans.Memory.KVCacheSequences = sumInts(held) // 0 for nil: absent
		// Why memory is above the levels table's row: the line a plan
		// of the same request gives.
		ans.Explanation = append(ans.Explanation, explainPaged(pl, req, maxBatch, ans.Memory)...)
		if line, ok := publishedElsewhere(req, ch); ok {
			ans.Explanation = append(ans.Explanation, line)
		} else if line := noCommandLine(req, pl); line != "" {
			ans.Explanation = append(ans.Explanation, line)
		}
	} else {
		ans.Memory = refusedMemory(req, pl)
		ans.Refusal = refusalOf(pl)
		ans.Explanation = append(ans.Explanation, NotFitLine(pl.Reason))
		if line, ok := otherEngineFits(req, ch); ok {
			ans.Explanation = append(ans.Explanation, line)
		}
	}
	return ans, nil
}

// noCommandLine says, for a fitting plan no published checkpoint runs
// (runsPublished), that a plan of it prints no command and what it lacks,
// as plan's headline does (engine.Load.Needs, a GGUF type no file is known
// of): suggest names the level to plan, and fit marks such a row "(no
// checkpoint)". "" where the plan's command runs.
func noCommandLine(req *planning, pl *planned) string {
	ld := planLoad(req, pl)
	if ld == nil || ld.Needs == "" && ld.Repo != "" {
		return ""
	}
	what := "no published checkpoint of this model is known"
	switch {
	case ld.Needs != "":
		what = "it needs " + ld.Needs
	case ld.GGUFType != "":
		what = fmt.Sprintf("no published %s GGUF of this model is known", ld.GGUFType)
	}
	return fmt.Sprintf("no command: a plan at %s under %s prints none: %s", pl.Level, pl.Pool.engine().Title(), what)
}
