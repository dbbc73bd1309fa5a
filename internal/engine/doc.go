// Package engine holds what the planner knows about each inference engine:
// one file per engine (vllm.go, llamacpp.go, sglang.go, none.go) behind one interface,
// Engine, and a registry of them by name.
//
// An engine says which device kinds it runs on and which it claims when a
// request names no engine (Preference, Default; Device is what it sees of
// the device: its kind, shared memory, a GGUF request and its compute
// capability, which vLLM's floor reads), its memory budget on a
// device (Memory: the fraction of total memory and the margin it keeps
// free, whether it serves from a paged pool, charges a profiled start-up
// inside its fraction or keeps its workspace outside it), its KV cache
// rules and the cache types it adds (KVRules, CacheTypes; LevelCacheRules
// where its cache depends on the weights' level), which precision
// levels it runs and what it loads for them (Levels, CannotLoad, Load),
// whether it splits tensors or only layers and where it keeps what it
// offloads to the host (Parallelism), and how a plan is started with it
// (Args, Env, Command, StartNotes).
//
// An engine may also answer optional questions, each an interface of its
// own that the planner checks with a type assertion: which fitted speed
// model its plans take (SpeedModeled, SpeedModelOf) and, for a serving
// engine, the calibration set fitted on its own runs whose constants they
// pay (ServingFitted, ServingFitOf: none, no engine's), a cap of its own on
// the requests it runs at once below what its KV pool holds
// (RequestCapper: SGLang's mamba state pool), the CPUs it cannot
// run on (CPUFloor), the prompt chunk it runs a prompt in (PromptChunker)
// and its fixed time per request (PromptRequestTimer), which levels its
// kernels run on a GPU of a given compute capability where a device's
// precision list should not decide (LevelRule), whether it fits its own
// context at launch when told to (ContextFitter), whether it is planned
// by release (Versioned, engine_version), and the words of its own the
// planner's sentences use: the setting of its share of a device
// (BudgetNamer), its start-up charge and its parts (StartupChargeNamer),
// the settings of a streamed offload (OffloadNamer), those of a placement
// in host memory it runs on the CPU (HostOffloadNamer) and the steps of
// the fit by which it chooses its own context and devices and what rounds
// the context it chooses (FitNamer), the settings its command gives its
// context and the sequences sharing it with (CommandContextNamer, which
// the CLI reads a command's context by), the mix of a GGUF type a
// published file is measured against (FileLoader.MainlineMix), the
// settings its speed rows ran with where it is the engine whose runs they
// are (SpeedRowsNamer; SpeedRowsEngine names it where another engine's
// plans borrow figures fitted on them), what
// the figures of its start-up report rest on and the refusal to start it
// warns of (StartupReportNamer), and the releases older than the rules
// the planner follows (ReleaseWarner).
//
// The planner (internal/plan) looks engines up by name and asks them; it
// never compares engine names, so engine name literals live here only
// (TestPlannerNamesNoEngine in internal/plan keeps it so; the calibration
// fit selects its data rows by the engine they name, and names the engine
// its replays ran).
// Planning inputs are engine-neutral views defined here (Device,
// Placement), which the planner fills from its own plan, so this package
// does not import the planner. The engine list that requests accept, the
// CLI offers, the request schema (schema/request.schema.json) and the
// docs (docs/requests.md) list is Names(); the KV cache types they list
// are CacheTypes(). internal/schema's tests keep the schema and the docs
// equal to both.
//
// Adding an engine: write a type implementing Engine (embed Base for the
// rules it does not have) in a file of its own and add it to the list
// registered in registry.go; then add its name to the schema's enums and
// to docs/requests.md, which the tests check. A test registers an engine
// of its own with Register and removes it with Unregister.
package engine
