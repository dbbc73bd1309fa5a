package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// Strategies of the contract.
const (
	StrategyNone     = "none"
	StrategyTensor   = "tensor_parallel"
	StrategyPipeline = "pipeline_parallel"
	StrategyData     = "data_parallel"
	StrategyOffload  = "cpu_offload"
)

// Shard is one device's part of a plan: layers [LayerStart, LayerEnd) and
// the memory placed on it.
type Shard struct {
	DeviceID             string `json:"device_id"`
	LayerStart           int    `json:"layer_start"`
	LayerEnd             int    `json:"layer_end"`
	MemoryBytes          int64  `json:"memory_bytes"`
	MemoryAvailableBytes int64  `json:"memory_available_bytes"`
	Stage                int    `json:"stage"`
	TPRank               int    `json:"tp_rank"`
	// Replica is the data-parallel replica of the shard, from 0; present
	// only when the request asked for replicas.
	Replica *int `json:"replica,omitempty"`
}

// ModelSummary says which model was planned.
type ModelSummary struct {
	Name         string `json:"name,omitempty"`
	Params       int64  `json:"params"`
	ActiveParams int64  `json:"active_params,omitempty"`
	Layers       int    `json:"layers,omitempty"`
	Source       string `json:"source,omitempty"`
}

// ShardingAnswer is the answer of hwaccel_plan_sharding.
type ShardingAnswer struct {
	// Fits is whether a plan fits: FitUnknown (null in JSON) when no
	// available device's memory is known, or devices of unknown memory
	// were left out of a refusal for memory (choice.fit).
	Fits Fit `json:"fits"`
	// Strategy and Quant are the plan's; a refusal has neither.
	Strategy   string              `json:"strategy,omitempty"`
	Quant      string              `json:"quant,omitempty"`
	Model      ModelSummary        `json:"model"`
	Memory     Memory              `json:"memory"`
	Shards     []Shard             `json:"shards"`
	TPSize     int                 `json:"tp_size"`
	PPSize     int                 `json:"pp_size"`
	DPSize     int                 `json:"dp_size,omitempty"`
	Throughput *Throughput         `json:"throughput,omitempty"`
	EngineArgs map[string][]string `json:"engine_args"`
	// Load and EngineEnv complete the engine command per engine: what it
	// loads (checkpoint.go) and the environment it needs.
	Load      map[string]Load              `json:"load,omitempty"`
	EngineEnv map[string]map[string]string `json:"engine_env,omitempty"`
	// EngineExpect is, per engine that sizes its own paged KV pool (vLLM),
	// what it will report at start-up for the plan (expect.go).
	EngineExpect     map[string]EngineExpect `json:"engine_expect,omitempty"`
	MaxContextLength int                     `json:"max_context_length,omitempty"`
	MaxBatchSize     int                     `json:"max_batch_size,omitempty"`
	// Budget is the memory rule the plan, its maxima and its engine_args
	// were made on (budget.go); absent when no device was planned on.
	Budget *Budget `json:"budget,omitempty"`
	// IdleDevices are devices of the chosen pool the plan leaves unused.
	IdleDevices []string   `json:"idle_devices,omitempty"`
	Levels      []LevelRow `json:"levels"`
	// Refusal says why the model does not fit (nil when it fits).
	Refusal     *Refusal `json:"refusal,omitempty"`
	Explanation []string `json:"explanation"`
	Warnings    []string `json:"warnings"`
}

// PlanSharding answers hwaccel_plan_sharding.
func PlanSharding(r *Request) (*ShardingAnswer, error) {
	req, err := newPlanning(r)
	if err != nil {
		return nil, err
	}
	req, ch, fitLine, err := chooseAtFitContext(req)
	if err != nil {
		return nil, err
	}
	ans := newShardingAnswer(req, ch)
	if fitLine != "" {
		ans.Explanation = append(ans.Explanation, fitLine)
	} else if line, ok := floorContextLine(req, ch); ok {
		ans.Explanation = append(ans.Explanation, line)
	}
	pl := &ch.Plan
	if !pl.Fits {
		ans.refuse(req, ch)
		return ans, nil
	}
	ans.setShape(req, ch)
	ans.addShards(pl, heldSequences(pl, req, ans.MaxBatchSize))
	ans.explainPlacement(pl, req, ch)
	tp := throughputOf(pl, req, ch.InterStage, fitLine != "", ans.MaxBatchSize)
	ans.Throughput = &tp
	ans.addEngineRun(pl, req, ch)
	ans.IdleDevices = idleDevices(ch)
	ans.Explanation = append(ans.Explanation, explainIdle(ch, ans.IdleDevices)...)
	ans.Explanation = append(ans.Explanation, explainPaged(pl, req, ans.MaxBatchSize, ans.Memory)...)
	ans.addEngineExpect(pl, req)
	return ans, nil
}

// chooseAtFitContext is chooseServing's choice, planned again at the
// context fitContext chooses where it chooses one (with the line that says
// so, and the planning of that context); else the first choice and "".
func chooseAtFitContext(req *planning) (*planning, *choice, string, error) {
	ch, err := chooseServing(req)
	if err != nil {
		return nil, nil, "", err
	}
	return planAtChosenContext(req, ch)
}

// newShardingAnswer is the answer's parts every answer has, fitting or
// not: the model, the level rows, the explanation of the choice, the
// warnings of the model and engine version, the budget.
func newShardingAnswer(req *planning, ch *choice) *ShardingAnswer {
	m := req.Model
	ans := &ShardingAnswer{Fits: ch.fit(), Shards: []Shard{},
		Model:      ModelSummary{Name: m.Name, Params: m.Params, ActiveParams: m.ActiveParams, Layers: m.Layers, Source: m.Source},
		EngineArgs: map[string][]string{}, Levels: ch.levelRows(), Explanation: explainChoice(ch), Warnings: append(modelWarnings(req), engineVersionWarnings(req)...),
		Budget: budgetOf(&ch.Plan)}
	if ans.Levels == nil {
		ans.Levels = []LevelRow{}
	}
	return ans
}

// refuse completes the answer of a plan that does not fit: the memory it
// would need, the refusal, and another engine that fits where one does.
func (ans *ShardingAnswer) refuse(req *planning, ch *choice) {
	pl := &ch.Plan
	ans.Memory = refusedMemory(req, pl)
	ans.Refusal = refusalOf(pl)
	ans.Explanation = append(ans.Explanation, NotFitLine(pl.Reason))
	if line, ok := otherEngineFits(req, ch); ok {
		ans.Explanation = append(ans.Explanation, line)
	}
}

// setShape sets a fitting plan's level and strategy, its parallel sizes
// (a streamed offload's host stage is no stage of its own) and its
// maximum context and batch, and warns of devices of unknown memory it
// left out.
func (ans *ShardingAnswer) setShape(req *planning, ch *choice) {
	pl := &ch.Plan
	ans.Strategy, ans.Quant = pl.Strategy, string(pl.Level)
	if w := unknownMemoryWarning(ch); w != "" {
		ans.Warnings = append(ans.Warnings, w)
	}
	ans.TPSize = pl.TP
	ans.PPSize = len(pl.Stages)
	if pl.streamed() {
		// The host stage stores weights the one GPU runs: one stage.
		ans.PPSize = 1
	}
	ans.DPSize = pl.DP
	ans.MaxContextLength = maxFitting(pl, req, true)
	ans.MaxBatchSize = maxFitting(pl, req, false)
}

// addShards lists every device's shard, replica by replica and stage by
// stage in layer order, with the memory it holds for the sequences held
// (heldSequences), and sums the memory.
func (ans *ShardingAnswer) addShards(pl *planned, held []int) {
	for ri, stages := range pl.replicas() {
		for si, s := range pl.inLayerOrder(stages) {
			for r, d := range s.Devices {
				start, end := pl.layerSpan(s)
				p := heldPart(s.Part, held, ri)
				sh := Shard{DeviceID: d.ID, LayerStart: start, LayerEnd: end,
					MemoryBytes: p.total(), MemoryAvailableBytes: d.Usable, Stage: si, TPRank: r}
				if pl.streamed() {
					sh.Stage = 0
				}
				if pl.DP > 0 {
					sh.Replica = &ri
				}
				ans.Shards = append(ans.Shards, sh)
				ans.Memory.add(p)
			}
		}
	}
	ans.Memory.KVCacheSequences = sumInts(held) // 0 for nil: absent
}

// explainPlacement explains the plan's layout, its replicas and the
// placement that chose its devices (the serving or the llama.cpp one).
func (ans *ShardingAnswer) explainPlacement(pl *planned, req *planning, ch *choice) {
	placement := ch.placement()
	if placement == "" {
		placement = ch.llamaPlacement()
	}
	ans.Explanation = append(ans.Explanation, describe(pl, placement != "")...)
	ans.Explanation = append(ans.Explanation, describeReplicas(pl, req, placement != "")...)
	if placement != "" {
		ans.Explanation = append(ans.Explanation, placement)
	}
}

// addEngineRun adds how each engine runs the plan: its command line, what
// it loads, its environment, notes and warnings, and a published file
// elsewhere where one names it.
func (ans *ShardingAnswer) addEngineRun(pl *planned, req *planning, ch *choice) {
	run := engineAnswerOf(pl, req, ch.Cluster)
	ans.EngineArgs, ans.Load, ans.EngineEnv = run.Args, run.Load, run.Env
	ans.Explanation = append(ans.Explanation, run.Notes...)
	if line, ok := publishedElsewhere(req, ch); ok {
		ans.Explanation = append(ans.Explanation, line)
	}
	ans.Warnings = append(ans.Warnings, run.Warnings...)
}

// addEngineExpect adds what each engine that sizes its own KV pool will
// report at start-up, and its warnings where the budget leaves the
// engine's workspace outside the fraction asked.
func (ans *ShardingAnswer) addEngineExpect(pl *planned, req *planning) {
	ans.EngineExpect = engineExpectOf(pl, req)
	ans.Warnings = addExpectWarnings(ans.Warnings, ans.EngineExpect)
}

// chooseServing is choose with the serving placement: a plan of an engine
// with a paged KV pool spread over its devices (placement.go), a llama.cpp
// plan on the devices llama.cpp would use (llamaplacement.go).
func chooseServing(req *planning) (*choice, error) {
	ch, err := choose(req)
	if err != nil {
		return nil, err
	}
	spreadServing(req, ch)
	spreadLlama(req, ch)
	return ch, nil
}

// throughputAt is the speed estimate of a fitting plan whose replicas hold
// maxBatch full-context sequences in all (maxFitting): on a paged KV pool
// each replica decodes its share of the batch, or as many sequences as its
// pool holds where that is fewer, and an assumption says so. The cap is
// set on a copy: throughputOf estimates the same plan at two depths, and a
// cap left on pl by the full-context estimate ran the shallower one at the
// full context's count (TestChosenContextSpeedRunsTheBatchThatFitsAtItsDepth).
func throughputAt(pl *planned, req *planning, inter float64, maxBatch int) Throughput {
	share := pl.batchOf(req)
	perReplica := maxBatch / pl.replicaCount()
	capped := pl.Pool.Budget.Paged && share > 1 && perReplica >= 1 && perReplica < share
	at := *pl
	at.Concurrent = 0
	if capped {
		at.Concurrent = perReplica
	}
	t := estimateThroughput(&at, req, inter)
	if capped {
		t.Assumptions = append(t.Assumptions, fmt.Sprintf("%s's paged KV cache holds %s of %d tokens per replica: %d of the %d run at once at full context, and the figures are of %d",
			pl.Pool.Budget.Engine.Title(), counted(perReplica, "sequence"), req.ContextLength, perReplica, share, perReplica))
	}
	return t
}

// explainPaged says how an engine with a paged KV pool serves the asked
// batch: the plan holds one full-context sequence, maxBatch of them fit at
// once, and the engine queues the rest; and what the plan's memory m
// counts of them (heldSequences), beside the levels table's one.
func explainPaged(pl *planned, req *planning, maxBatch int, m Memory) []string {
	if pl.Pool == nil || !pl.Pool.Budget.Paged || req.training {
		return nil
	}
	e := pl.Pool.Budget.Engine.Title()
	batch := req.BatchSize
	var capped []string
	if c, why, ok := requestCap(pl, req); ok && c*max(pl.DP, 1) <= maxBatch {
		// The engine's own cap is the batch's bound (maxFitting): SGLang's
		// mamba state pool, whatever its KV pool holds.
		capped = []string{why}
	}
	// Data-parallel replicas each allocate their own pool (vLLM's
	// --data-parallel-size runs one engine core per replica); maxBatch is
	// theirs together.
	pools, holds, all, needs, full := "one paged KV cache", "holds", "", "one", "the cache is"
	if pl.DP >= 2 {
		pools, holds, all = fmt.Sprintf("%d paged KV caches, one per replica", pl.DP), "hold", " in all"
		needs, full = "one in each", "a replica's cache is"
	}
	switch {
	case batch <= 1:
		return capped
	case maxBatch >= batch:
		return append([]string{fmt.Sprintf("%s serves the batch from %s: all %d sequences of %d tokens fit at once (up to %d would)%s",
			e, pools, batch, req.ContextLength, maxBatch, heldWords(m, "", e))}, capped...)
	case len(capped) > 0:
		return append([]string{fmt.Sprintf("%s serves the batch from %s: it runs %d of the %d sequences of %d tokens at once%s and queues the rest%s",
			e, pools, maxBatch, batch, req.ContextLength, all, heldWords(m, " it runs", e))}, capped...)
	}
	return []string{fmt.Sprintf("%s serves the batch from %s, which %s %s of %d tokens at once%s: the plan needs %s, and %s runs up to %d at a time while they are shorter, queuing or preempting the rest when %s full%s",
		e, pools, holds, counted(maxBatch, "sequence"), req.ContextLength, all, needs, e, batch, full, heldWords(m, " it holds", e))}
}

// heldWords says what memory m counts of a paged plan's sequences and
// what the levels table counts instead: "; memory counts the 8 (KV cache
// 32.0 GiB), the levels table the one vLLM needs to start"; "" where m
// counts none (Memory.KVCacheSequences absent).
func heldWords(m Memory, which, engine string) string {
	if m.KVCacheSequences <= 0 {
		return ""
	}
	return fmt.Sprintf("; memory counts the %d%s (KV cache %s), the levels table the one %s needs to start",
		m.KVCacheSequences, which, gib(m.KVCacheBytes), engine)
}

// maxFitting answers the inverse question for a fitting plan: the longest
// context (batch fixed) or the largest batch (context fixed) for which the
// same devices, split the same way, still hold the model. For the context
// the layer split is recomputed for each candidate (the plan is then made
// again at the context chosen); the batch is the one the plan's own split
// holds, the figure the engine will report for the command as printed
// (engine_expect's max_concurrency, the least over the stages), except
// for an offloaded plan, whose split is recomputed.
func maxFitting(pl *planned, req *planning, context bool) int {
	limit := MaxBatchSize
	if context {
		limit = MaxContextLength
		if req.Model.MaxContext > 0 && req.Model.MaxContext < limit {
			limit = req.Model.MaxContext
		}
	}
	units := distinctUnits(pl.replicas())
	hostKV, hostKVOK := hostKVPool(pl)
	fits := func(n int) bool {
		ctx, batch := req.ContextLength, fitBatch(pl.Pool, pl.batchOf(req))
		if context {
			ctx = n
		} else {
			batch = n
		}
		b, sane := estimateSaneOn(req, pl.Pool, pl.Level, ctx, batch)
		if !sane {
			return false
		}
		// vLLM's pool is sized at start-up with the plan's --max-num-seqs,
		// whatever the number of sequences asked of it.
		c := req.costsOf(b, pl.Pool.sizedAs(pl.Level), ctx, pl.batchOf(req))
		if pl.streamed() {
			// vLLM's and SGLang's offload is fixed by the command; the
			// GPU (charged vLLM's start-up, or within SGLang's pool
			// rule) holds every layer's KV cache.
			return streamedHolds(pl, c.on(pl.Pool))
		}
		if pl.Offloaded {
			// The other offload plans were made without the engines' own
			// start-up rules (planOffloadLevels): neither vLLM's charge
			// nor SGLang's pool check.
			c.VLLM, c.Context = nil, 0
		}
		c = c.on(pl.Pool)
		if pl.Offloaded {
			return printedSplitHolds(pl, c)
		}
		if hostKVOK && !hostKVHoldsUnits(units, c, hostKV) {
			// The pool the command names (vLLM on the CPU:
			// VLLM_CPU_KVCACHE_SPACE), not the host's remainder.
			return false
		}
		if !context && c.Static != nil {
			// SGLang sizes its pool at start-up whatever the number of
			// sequences (--mem-fraction-static less the weights:
			// staticPool), its workspace outside it: the batch is what
			// that pool holds, the figure engine_expect reports
			// (max_total_num_tokens over the context), the plan itself
			// having fitted at its own batch.
			return poolsHold(units, c)
		}
		for _, r := range units {
			if !unitFits(r, c, pl.Offloaded, !context && !pl.Offloaded) {
				return false
			}
		}
		return true
	}
	k := search{context: context, limit: limit, origin: pl.Pool.origin(), devices: pl.Pool.Devices, level: pl.Level,
		batch: pl.batchOf(req), offloaded: pl.Offloaded, units: units}
	if !context {
		k.ctx = req.ContextLength
	}
	n := req.remembered().searches.largest(k, func() int { return quant.Largest(limit, fits) })
	if !context {
		// The engine may run fewer than its pool holds (SGLang's mamba
		// state pool).
		n, _ = replicaRequests(pl, req, n)
	}
	if !context && pl.DP > 1 {
		// The batch of a data-parallel plan is split over its replicas.
		n = min(n*pl.DP, MaxBatchSize)
	}
	return n
}

// printedSplitHolds reports whether costs c (a longer context or more
// sequences) fit the devices of pl, a plan with part of the model in host
// RAM, placed as its command places it: the same layers on each GPU and
// the same experts in host RAM. llama.cpp allocates each layer's KV cache
// on that layer's device (llama_kv_cache in src/llama-kv-cache.cpp of
// ggml-org/llama.cpp), so the cache of the GPUs' layers grows on the GPUs
// and the host's free RAM holds only its own layers' share: under
// --n-cpu-moe, with every layer on a GPU, none. The room re-split the
// layers instead, counting host RAM the printed command's cache never
// uses (Qwen3-30B-A3B at q4_k_m on an 8 GiB GPU: 134 sequences where the
// command holds 1).
func printedSplitHolds(pl *planned, c costs) bool {
	gpus := pl.Stages[:len(pl.Stages)-1]
	host := pl.Stages[len(pl.Stages)-1]
	var hostPart part
	switch {
	case pl.moeOffload():
		h := pl.moeHost()
		for _, s := range gpus {
			if moeGPUPart(c, h, s.Start, s.End).total() > s.Devices[0].Usable {
				return false
			}
		}
		hostPart = moeHostPart(c, h)
	case pl.AllExpertsOnHost:
		k := host.Start
		for _, s := range gpus {
			if step3GPUPart(c, k, s.Start, s.End).total() > s.Devices[0].Usable {
				return false
			}
		}
		hostPart = step3HostPart(c, k)
	default:
		for _, s := range pl.Stages {
			s.Part = c.stagePart(s.Start, s.End, len(s.Devices))
			if !c.stageFits(s, len(pl.Stages)) {
				return false
			}
		}
		return true
	}
	return hostPart.total() <= host.Devices[0].Usable
}

// hostKVHoldsUnits reports whether the one KV pool a plan on host memory
// alone names for every rank (hostKVPool) holds the KV cache of each
// device of each unit, its stage's layers at costs c, in whole blocks
// (costs.hostKVNeed).
func hostKVHoldsUnits(units [][]stage, c costs, pool int64) bool {
	for _, r := range units {
		for _, s := range r {
			if c.hostKVNeed(c.stagePart(s.Start, s.End, len(s.Devices)).KV) > pool {
				return false
			}
		}
	}
	return true
}

// distinctUnits is the replicas whose memory differs: of replicas of one
// stage, one per stage budget (the replicas of a serving plan over
// hundreds of identical devices hold the same and answer the same);
// replicas of several stages are all kept.
func distinctUnits(rs [][]stage) [][]stage {
	if len(rs) < 2 {
		return rs
	}
	seen := map[int64]bool{}
	var out [][]stage
	for _, r := range rs {
		if len(r) != 1 {
			out = append(out, r)
			continue
		}
		if b := r[0].budget(); !seen[b] {
			seen[b] = true
			out = append(out, r)
		}
	}
	return out
}

// poolsHold reports whether SGLang's pool on every stage of units, at the
// stages' own layers, holds the sequences costs c were made for
// (staticHolds).
func poolsHold(units [][]stage, c costs) bool {
	for _, r := range units {
		for _, s := range r {
			s.Part = c.stagePart(s.Start, s.End, len(s.Devices))
			if !c.staticHolds(s, len(r)) {
				return false
			}
		}
	}
	return true
}

// unitFits reports whether the devices of one replica's stages, split the
// same way, hold the model under costs c: at the stages' own layers with
// keepSplit, else the layer split recomputed.
func unitFits(r []stage, c costs, offloaded, keepSplit bool) bool {
	if keepSplit && len(r) > 1 {
		for _, s := range r {
			s.Part = c.stagePart(s.Start, s.End, len(s.Devices))
			if !c.stageFits(s, len(r)) {
				return false
			}
		}
		return true
	}
	if len(r) == 1 {
		s := stage{Devices: r[0].Devices}
		s.Part = c.stagePart(0, c.Layers, len(s.Devices))
		return c.stageFits(s, 1)
	}
	stages := make([]stage, len(r))
	for i, s := range r {
		stages[i] = stage{Devices: s.Devices}
	}
	return assignLayers(stages, c, offloaded)
}

// maxContextPasses bounds how many times a chosen context is planned
// again (planAtChosenContext): each pass only lengthens it, up to the
// model's trained context.
const maxContextPasses = 4

// planAtChosenContext plans again, on a copy of the request (the caller's
// keeps what it asked), at the context the engine would choose for the
// first pass's choice ch (fitContext), and returns the request and choice
// of the last pass with the context line; req and ch themselves where the
// request's context stands. Planning at a longer context may choose
// another layout (vLLM and SGLang compare layouts at the planned context:
// more GPUs a replica at a long one), whose pool may hold a longer context
// still; the context is then chosen again for that layout, until a pass
// chooses none longer, so that the command's context is what its own
// layout holds, as the context line says.
func planAtChosenContext(req *planning, ch *choice) (*planning, *choice, string, error) {
	first, floor := ch, req.ContextLength
	var fitLine string
	for range maxContextPasses {
		ctx, line, ok := fitContext(req, ch, floor)
		if !ok {
			break
		}
		r2 := *req.Request
		r2.ContextLength = ctx
		next := &planning{Request: &r2, memo: req.remembered()}
		nch, err := chooseServing(next)
		if err != nil {
			return nil, nil, "", err
		}
		if !nch.Plan.Fits {
			// Not expected (the layout the context was chosen for
			// holds it), but a pass that does not fit keeps the last
			// that does.
			break
		}
		req, ch, fitLine = next, nch, line
	}
	if ch == first {
		return req, ch, "", nil
	}
	if ch.PublishedWhy == "" {
		// The level auto passed over for a published one fitted at the
		// first context (its line says which), perhaps not at the one
		// chosen for the published level.
		ch.PublishedWhy = first.PublishedWhy
	}
	if first.Llama != nil {
		// The llama.cpp placement compared the devices at the first
		// pass's context: the fewest devices and what they hold are that
		// pass's.
		ch.Llama = first.Llama
	}
	return req, ch, fitLine, nil
}
