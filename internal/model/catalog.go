package model

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// The catalog is edited as catalog.json and compiled into catalog_gen.go
// (catalogEntries), so that this package, which the planner imports, needs
// no JSON decoder; gencatalog's TestGeneratedUpToDate fails when
// catalog_gen.go is stale.
//go:generate go run ./gencatalog -in catalog.json -out catalog_gen.go

// CatalogEntry is one model of the embedded catalog: its published config
// fields (Hugging Face names) and where each fact comes from.
type CatalogEntry struct {
	Name    string   `json:"name"`
	HFID    string   `json:"hf_id,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// ParamsB is the published total parameter count in billions when the
	// source states an exact figure (model card, llama-bench's count of the
	// GGUF tensors); 0 when only a nominal size ("70B") exists, in which case
	// the count is computed from the config. ParamsB replaces the model's
	// Params, the language model's weights, so a count that holds a vision
	// tower or MTP modules is recorded as HubParams instead (those are
	// planned apart: Model.VisionParams, Model.MTPParams); medgemma-27b-it
	// keeps its ParamsB while the frozen shape fit reads it
	// (model.plannedWithTowerInShapeFit in catalog_planned_test.go).
	ParamsB      float64 `json:"params_b,omitempty"`
	ParamsSource string  `json:"params_source,omitempty"`
	// ParamsInclude says what the published count holds beyond the
	// language model, parts joined by "+" (CountedAs): "mtp" and "vision"
	// when it counts the checkpoint's MTP modules and vision tower too
	// (Model.MTPParams, Model.VisionParams); "tied-head" when the
	// checkpoint stores the output head of a model whose head is tied to
	// its embedding beside that embedding, a copy loaders skip;
	// "mtp-embed-head" when each MTP layer stores its own copy of the
	// embedding and output head (GLM-4.7); "expert-scales/N" when the checkpoint group-quantizes its routed
	// experts with one scale per N weights and the count (the Hub's, which
	// counts packed weights unpacked) holds those scales too; "" when it
	// is the language model's alone.
	ParamsInclude string `json:"params_include,omitempty"`
	// HubParams is the Hugging Face Hub's count of every tensor in the
	// model's checkpoint (safetensors.total), or the same count as another
	// source states it from the checkpoint's tensors (HubParamsSource says
	// which), recorded where the count
	// holds modules the planner does not take as language-model weights
	// (the MTP modules and vision tower ParamsInclude names), where it is
	// the count of a sibling checkpoint of the same shape (a fine-tune or
	// the base of the model; the source says which), or where a ParamsB
	// would move the frozen shape fit of internal/calibration/fit. It checks
	// the count derived from the config (quant's catalog totals test) and
	// is never a planning input: unlike ParamsB it does not replace the
	// model's Params, so recording it changes no answer.
	HubParams       int64  `json:"hub_params,omitempty"`
	HubParamsSource string `json:"hub_params_source,omitempty"`
	// ActiveParamsB is the published active count of a MoE (documentation
	// and tests only: sources differ on whether embeddings count, so the
	// model's ActiveParams is computed from the shape, see ShapeParams).
	ActiveParamsB float64        `json:"active_params_b,omitempty"`
	Config        map[string]any `json:"config"`
	Source        string         `json:"source"`
	Notes         string         `json:"notes,omitempty"`
	// Checkpoints are the model's published checkpoints, the publisher's
	// first (its native format).
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	// Instruct is the instruction-tuned release of an entry whose own
	// checkpoint is the pretrained (base) model, of the same architecture:
	// the release an ollama tag of the family names (OllamaTag).
	Instruct InstructRelease `json:"instruct,omitzero"`
	// Preprocessor is the image processor's limits from the model's
	// preprocessor_config.json (min_pixels, max_pixels, patch_size,
	// merge_size, temporal_patch_size), values verbatim, for towers of
	// dynamic resolution whose largest image config.json does not give
	// (Qwen2-VL and Qwen2.5-VL: Model.VisionItem); PreprocessorSource is
	// the page it came from.
	Preprocessor       map[string]any `json:"preprocessor_config,omitempty"`
	PreprocessorSource string         `json:"preprocessor_source,omitempty"`
}

// InstructRelease is the instruction-tuned release of a pretrained
// catalog entry.
type InstructRelease struct {
	// Repo is its Hugging Face repository: another catalog entry's id, or
	// a checkpoint of the entry's shape that a tag then serves.
	Repo string `json:"repo"`
	// Ollama are tags of ollama's library built from this release whose
	// normalized key names another entry ("mistral:7b" is Mistral 7B
	// v0.3's instruct model, while the alias mistral-7b names v0.1's base).
	Ollama []string `json:"ollama,omitempty"`
	// Source is the page of ollama's library that shows its tags are the
	// tuned release (the tag names, template or parameters).
	Source string `json:"source"`
	// Config holds the keys of the release's own config.json whose values
	// differ from the entry's config, values verbatim: Qwen2.5-7B-Instruct
	// publishes max_position_embeddings 32768 where the base model's
	// config says 131072. The entry's config keeps every fact the two
	// share, so a key equal to the entry's value is refused (instructEntry).
	Config map[string]any `json:"config,omitempty"`
	// ConfigSource is where Config's values were read; required with it.
	ConfigSource string `json:"config_source,omitempty"`
}

// CountedAs is m's parameter count as the entry's published count
// measures it: m.Params plus each part ParamsInclude names. A part it does
// not know is an error, so that a misspelt one cannot pass unnoticed.
func (e CatalogEntry) CountedAs(m *Model) (int64, error) {
	n := m.Params
	if e.ParamsInclude == "" {
		return n, nil
	}
	for _, part := range strings.Split(e.ParamsInclude, "+") {
		switch part {
		case "mtp":
			n += m.MTPParams
		case "vision":
			n += m.VisionParams
		case "tied-head":
			if !m.TieEmbeddings {
				return 0, fmt.Errorf("model: %s: params_include tied-head, but the config does not tie the head", e.Name)
			}
			n += int64(m.Vocab) * int64(m.Hidden)
		case "mtp-embed-head":
			copies, err := e.mtpEmbedHead(m)
			if err != nil {
				return 0, err
			}
			n += copies
		default:
			scales, err := expertScales(e.Name, part, m)
			if err != nil {
				return 0, err
			}
			n += scales
		}
	}
	return n, nil
}

// mtpEmbedHead is the params_include part "mtp-embed-head": the copy of
// the embedding and of the output head (2 × vocab × hidden) that each MTP
// layer of the config stores in some checkpoints (GLM-4.5's and GLM-4.7's
// model.layers.N.embed_tokens and shared_head.head, which GLM-4.6's leaves
// out: https://github.com/vllm-project/vllm/pull/27597). Model.MTPParams
// does not count them, since engines tie them to the model's own.
func (e CatalogEntry) mtpEmbedHead(m *Model) (int64, error) {
	c := configReader{cfg: e.Config}
	layers := c.int(configKeys.mtp)
	if c.err != nil || layers == 0 {
		return 0, fmt.Errorf("model: %s: params_include part mtp-embed-head, but the config declares no MTP layer", e.Name)
	}
	return int64(layers) * 2 * int64(m.Vocab) * int64(m.Hidden), nil
}

// expertScales is the params_include part "expert-scales/N": one scale
// per N routed-expert weights in every MoE layer. Any other part is an
// error, so that a misspelt one cannot pass unnoticed.
func expertScales(name, part string, m *Model) (int64, error) {
	g, ok := strings.CutPrefix(part, "expert-scales/")
	if !ok {
		return 0, fmt.Errorf("model: %s: params_include part %q is none of mtp, mtp-embed-head, vision, tied-head, expert-scales/N", name, part)
	}
	size, err := strconv.Atoi(g)
	if err != nil || size <= 0 {
		return 0, fmt.Errorf("model: %s: params_include part %q: the group size is not a positive integer", name, part)
	}
	layers := m.MoELayers()
	if layers == 0 {
		return 0, fmt.Errorf("model: %s: params_include part %q, but the model has no routed experts", name, part)
	}
	return m.RoutedExpertParams() * int64(layers) / int64(size), nil
}

// Checkpoint is one published checkpoint of a catalog model: what to load
// to run the model at one precision.
type Checkpoint struct {
	// Quant is the planning level the checkpoint stores (bf16, fp8,
	// mxfp4, int4, int8, or a GGUF type such as q4_k_m).
	Quant string `json:"quant"`
	// Repo is the Hugging Face repository id.
	Repo string `json:"repo"`
	// Method is the quantization method the checkpoint's config declares
	// (quantization_config.quant_method: fp8, mxfp4, awq, gptq), "gguf" for
	// a GGUF repository, "" for plain 16-bit weights.
	Method string `json:"method,omitempty"`
	// File is the GGUF file to load from a GGUF repository; "" for a
	// repository of one file per type, from which llama.cpp's -hf REPO:TYPE
	// picks the file of Quant.
	File string `json:"file,omitempty"`
	// MMProj is the vision projector file a GGUF repository publishes
	// beside the weights (mmproj-...gguf), where a source names it: the
	// file llama-server -hf downloads and loads with this checkpoint's,
	// which llama.cpp chooses by type (llamahf.PickProjector: the nearest
	// the weights', so Q4_K_M weights take a Q8_0 projector before an F16
	// one), here among the files the catalog's sources name in the
	// repository (TestCatalogProjectorsFollowLlamaCPP).
	MMProj string `json:"mmproj,omitempty"`
	Source string `json:"source"`
	// Layout is how the checkpoint stores its weights where the entry's
	// config copy lacks its quantization_config (which parts are quantized,
	// bits, scales), with the source it was read from; its Quant is the
	// checkpoint's. Zero: the weights follow the level alone.
	Layout WeightLayout `json:"layout,omitzero"`
	// SplitBlock is the side of the square blocks the checkpoint stores
	// its fp8 weights in (quantization_config weight_block_size) where no
	// copy of that config is at hand to record a Layout from, but an
	// engine's refusal to load the checkpoint names the block
	// (SplitBlockSource). It rules the tensor-parallel sizes vLLM and
	// SGLang load the checkpoint at (quant.WeightBlock), not its bytes,
	// which follow the level as without a Layout.
	SplitBlock       int    `json:"split_block,omitempty"`
	SplitBlockSource string `json:"split_block_source,omitempty"`
	// SizeBytes is the published size of the weights, where a source
	// states it (SizeSource).
	SizeBytes  int64  `json:"size_bytes,omitempty"`
	SizeSource string `json:"size_source,omitempty"`
	// BaseModel is the repository the checkpoint was made from, as its
	// model card's base_model names it, where that is not the entry's own
	// checkpoint: a quantization of the entry's instruction-tuned release
	// (InstructRelease.Repo) carries that release's config.json, with its
	// own values (Qwen/Qwen2.5-72B-Instruct-AWQ: its card says "The current
	// config.json is set for context length up to 32,768 tokens", as the
	// release's does), so it is planned with them (servesRelease).
	BaseModel string `json:"base_model,omitempty"`
	// FileMTP is what a GGUF file holds of the model's MTP (nextn) layers
	// beside the model, as the converter that made it writes them: ""
	// nothing; "layer": each MTP layer as blk.N past num_hidden_layers
	// (its attention and FFN, nextn.eh_proj, nextn.enorm, nextn.hnorm,
	// nextn.shared_head_norm); "layer+embed-head": with the layer's own
	// copies of the embedding and output head (nextn.embed_tokens,
	// nextn.shared_head_head), where the checkpoint stores them (the
	// entry's params_include mtp-embed-head). FileMTPSource says which
	// converter made the file and where it writes them. The file's size
	// counts them (quant.GGUFFileBytes); device memory does not, as
	// llama.cpp skips them at load unless MTP is on.
	FileMTP       string `json:"file_mtp,omitempty"`
	FileMTPSource string `json:"file_mtp_source,omitempty"`
	// SizeMix names the quantization rules that made a GGUF file where
	// they are not mainline llama.cpp's (the mix of Quant that
	// quant.WeightsBytes replays from src/llama-quant.cpp of
	// ggml-org/llama.cpp) and make the file larger: a fork's per-tensor
	// rules, a publisher's own mix. SizeMixSource says where those rules
	// are. With it SizeBytes is the file's size, above the weights derived
	// (the catalog totals test checks that it is above, not within 1 %),
	// and a plan that loads the file charges the file's tensors
	// (quant.FileExtraBytes). A file smaller than derived needs none: the
	// derived figure is the conservative one.
	SizeMix       string `json:"size_mix,omitempty"`
	SizeMixSource string `json:"size_mix_source,omitempty"`
	// SizeMixExperts and SizeMixOther say where those rules put what the
	// file holds beyond the derived weights, as the source states it:
	// SizeMixExperts "mainline" (the routed experts typed as mainline's
	// mix types them) or "quant_types" (bartowski's branch, whose rules
	// the planner replays for them), SizeMixOther the type of every
	// other tensor (a level: "bf16", "q8_0"). The plan keeps the routed
	// experts' share in them, which llama.cpp's --n-cpu-moe moves to host
	// memory (quant.FileRoutedExperts); with neither, the extra is spread
	// in proportion to the derived bytes.
	SizeMixExperts string `json:"size_mix_experts,omitempty"`
	SizeMixOther   string `json:"size_mix_other,omitempty"`
	Notes          string `json:"notes,omitempty"`
	// Release is the release of its entry the checkpoint stores
	// (checkpointRelease), set when the catalog is loaded.
	Release Release `json:"-"`
}

// IsGGUF reports whether the checkpoint is a GGUF file (for llama.cpp).
func (c Checkpoint) IsGGUF() bool { return c.Method == "gguf" }

type catalogIndexed struct {
	entries []indexedEntry
	byKey   map[string]int
	// byTag maps the ollama tags InstructRelease.Ollama lists (lower
	// case) to their entries.
	byTag map[string]int
	// byRelease maps the normalized name of an entry's instruction-tuned
	// release (InstructRelease.Repo) to the entry, for a release that is
	// not a name, alias or checkpoint of an entry already and whose name
	// does not end in a tuned ending ("Mistral-7B-Instruct-v0.3").
	byRelease map[string]int
}

type indexedEntry struct {
	CatalogEntry
	model Model
	// release is the model of the entry's instruction-tuned release when
	// its config differs from the entry's (InstructRelease.Config), with
	// releaseConfig that config; nil otherwise.
	release       *Model
	releaseConfig map[string]any
}

var catalog = loadCatalog()

// loadCatalog indexes the compiled-in catalog. A broken catalog is a build
// defect, caught by the tests, so it panics at init.
func loadCatalog() catalogIndexed {
	c := catalogIndexed{byKey: map[string]int{}, byTag: map[string]int{}, byRelease: map[string]int{}}
	for _, e := range catalogEntries {
		// The model's checkpoints carry their releases; the entry, as
		// Catalog lists it, stays catalog.json's.
		cks, err := e.withReleases()
		if err != nil {
			panic(fmt.Sprintf("model: catalog entry %s: %v", e.Name, err))
		}
		withReleases := e
		withReleases.Checkpoints = cks
		m, err := entryModel(withReleases)
		if err != nil {
			panic(fmt.Sprintf("model: catalog entry %s: %v", e.Name, err))
		}
		ie := indexedEntry{CatalogEntry: e, model: *m}
		if len(e.Instruct.Config) > 0 {
			re, err := e.instructEntry()
			if err == nil {
				ie.release, err = entryModel(re)
			}
			if err != nil {
				panic(fmt.Sprintf("model: catalog entry %s: instruct release: %v", e.Name, err))
			}
			ie.releaseConfig = re.Config
		}
		i := len(c.entries)
		c.entries = append(c.entries, ie)
		keys := append([]string{e.Name, e.HFID, baseName(e.HFID)}, e.Aliases...)
		// A checkpoint's repository names the model too (a user copies
		// "Qwen/Qwen3-32B-AWQ" from Hugging Face).
		for _, ck := range e.Checkpoints {
			keys = append(keys, baseName(ck.Repo))
		}
		for _, k := range keys {
			if n := normalize(k); n != "" {
				if j, dup := c.byKey[n]; dup && j != i {
					panic(fmt.Sprintf("model: catalog key %q of %s already names %s", k, e.Name, c.entries[j].Name))
				}
				c.byKey[n] = i
			}
		}
		for _, tag := range e.Instruct.Ollama {
			c.byTag[strings.ToLower(tag)] = i
		}
		if n := normalize(baseName(e.Instruct.Repo)); n != "" {
			c.byRelease[n] = i
		}
	}
	// A release with an entry of its own (Mixtral-8x7B-Instruct-v0.1) is
	// that entry.
	for n := range c.byRelease {
		if _, own := c.byKey[n]; own {
			delete(c.byRelease, n)
		}
	}
	return c
}

func entryModel(e CatalogEntry) (*Model, error) {
	m, err := FromConfig(e.Config)
	if err != nil {
		return nil, err
	}
	m.Name = e.Name
	applyPreprocessor(m, e.Config, e.Preprocessor)
	if e.ParamsB > 0 {
		setParams(m, int64(math.Round(e.ParamsB*1e9)))
	}
	m.Source = "catalog: " + e.Source
	m.Checkpoints = e.Checkpoints
	if !hasHFCheckpoint(e.Checkpoints) && e.HFID != "" {
		// An entry listing GGUF files only still has its publisher's
		// checkpoint, which vLLM and SGLang serve.
		m.Checkpoints = append([]Checkpoint{defaultCheckpoint(e)}, e.Checkpoints...)
	}
	return m, nil
}

// instructEntry is e as its instruction-tuned release publishes it: the
// entry's config with the release's own values (Instruct.Config) over it,
// cited by Instruct.ConfigSource. A value equal to the entry's is an
// error: that fact's home is the entry's config.
func (e CatalogEntry) instructEntry() (CatalogEntry, error) {
	r := e.Instruct
	if r.Repo == "" || r.ConfigSource == "" {
		return e, fmt.Errorf("config without a repo and config_source")
	}
	cfg := make(map[string]any, len(e.Config)+len(r.Config))
	for k, v := range e.Config {
		cfg[k] = v
	}
	for k, v := range r.Config {
		if old, ok := e.Config[k]; ok && reflect.DeepEqual(old, v) {
			return e, fmt.Errorf("config key %s repeats the entry's value %v", k, v)
		}
		cfg[k] = v
	}
	e.Config = cfg
	e.Source = fmt.Sprintf("%s, with %s's own config values (%s)", e.Source, r.Repo, r.ConfigSource)
	return e, nil
}

// hasHFCheckpoint reports whether cks lists a Hugging Face checkpoint (not
// a GGUF file).
func hasHFCheckpoint(cks []Checkpoint) bool {
	for _, ck := range cks {
		if !ck.IsGGUF() {
			return true
		}
	}
	return false
}

// defaultCheckpoint is the publisher's checkpoint of an entry that lists
// none but GGUF files: its Hugging Face repository, in the config's torch_dtype (16-bit:
// float16, else bfloat16, the dtype of every such entry's release).
func defaultCheckpoint(e CatalogEntry) Checkpoint {
	q := "bf16"
	if d, _ := e.Config["torch_dtype"].(string); d == "float16" {
		q = "fp16"
	}
	return Checkpoint{Quant: q, Repo: e.HFID, Source: "https://huggingface.co/" + e.HFID}
}

// namedCheckpoint is the index in cks of the checkpoint whose repository
// the user named (with or without its organisation), -1 when the name is
// the model's, not a checkpoint's. A GGUF repository is listed as one
// checkpoint per type it holds, all of which the name names: the first
// listed is returned, and Model.Named takes in the others. A name with its
// organisation is first matched whole, so that of two publishers'
// repositories of one name (Qwen/Qwen3-8B-GGUF, unsloth/Qwen3-8B-GGUF)
// each names its own; without one, or of an organisation no checkpoint
// has, two repositories of one name, like a Hugging Face repository
// listed twice, name no one checkpoint and are not matched.
func namedCheckpoint(cks []Checkpoint, name string) int {
	if strings.Contains(name, "/") {
		if i, listed := checkpointNamed(cks, normalize(name), func(repo string) string { return normalize(repo) }); listed {
			return i
		}
	}
	i, _ := checkpointNamed(cks, normalize(baseName(name)), func(repo string) string { return normalize(baseName(repo)) })
	return i
}

// checkpointNamed is namedCheckpoint's match of key against each
// checkpoint's repository as keyOf reads it: the index (-1 when the key
// matches two repositories, or one non-GGUF repository twice), and
// whether any checkpoint matched.
func checkpointNamed(cks []Checkpoint, key string, keyOf func(repo string) string) (int, bool) {
	found := -1
	for i, ck := range cks {
		if keyOf(ck.Repo) != key {
			continue
		}
		switch {
		case found < 0:
			found = i
		case ck.Repo != cks[found].Repo || !ck.IsGGUF() || !cks[found].IsGGUF():
			return -1, true
		}
	}
	return found, found >= 0
}

// Catalog lists the embedded models, for docs and the CLI.
func Catalog() []CatalogEntry {
	out := make([]CatalogEntry, len(catalog.entries))
	for i, e := range catalog.entries {
		out[i] = e.CatalogEntry
	}
	return out
}

// ReleaseConfig is the config.json the catalog holds for the release a
// name serves (FromName's checkpoint): the entry's config, or, for its
// instruction-tuned release, the entry's config with the release's own
// values over it (InstructRelease.Config). Shared: callers must not change
// it.
func ReleaseConfig(name string) (map[string]any, error) {
	m, err := FromName(name, nil)
	if err != nil {
		return nil, err
	}
	i, _ := lookupIndex(name)
	e := &catalog.entries[i]
	if e.servesRelease(m) {
		return e.releaseConfig, nil
	}
	return e.Config, nil
}

// servesRelease reports whether m, a model of entry e, names e's
// instruction-tuned release (Releases.Named, set by nameRelease: the
// release's repository, a checkpoint of it by its base_model or its name,
// an ollama tag), and that release publishes a config of its own
// (InstructRelease.Config).
func (e *indexedEntry) servesRelease(m *Model) bool {
	return e.release != nil && m.Releases.Named == TunedRelease
}

// releaseModel is m, a model of entry e that serves e's instruction-tuned
// release (servesRelease), planned from the release's own config
// (e.release): the checkpoints m serves and the notes its name added stay,
// and a note names the values that differ from the entry's.
func (e *indexedEntry) releaseModel(m *Model) *Model {
	r := *e.release
	keys := make([]string, 0, len(e.Instruct.Config))
	for k := range e.Instruct.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := make([]string, len(keys))
	for j, k := range keys {
		values[j] = fmt.Sprintf("%s %v", k, e.Instruct.Config[k])
	}
	added := m.Notes[min(len(e.model.Notes), len(m.Notes)):]
	r.Notes = append(append(append([]string(nil), e.release.Notes...), added...),
		fmt.Sprintf("config: %s publishes its own %s over the catalog's %s config", e.Instruct.Repo, strings.Join(values, ", "), e.Name))
	r.Checkpoints, r.NamedCheckpoint = m.Checkpoints, m.NamedCheckpoint
	r.Releases = m.Releases
	return &r
}

// Lookup returns the catalog model for a name, or nil.
func Lookup(name string) *Model {
	i, ok := lookupIndex(name)
	if !ok {
		return nil
	}
	m := catalog.entries[i].model
	m.Notes = append([]string(nil), m.Notes...)
	return &m
}

// variantSuffixes are name endings that do not change the architecture:
// instruction-tuned and chat variants share the base model's config.
var variantSuffixes = []string{"instruct", "chat", "it", "hf", "base", "fp8", "bf16"}

func lookupIndex(name string) (int, bool) {
	if i, ok := ollamaEntry(name); ok {
		return i, true
	}
	i, _, ok := lookupTrimmed(name)
	return i, ok
}

// OllamaTag reports whether name is written as an ollama tag,
// "family:tag" ("gemma3:27b", "llama3.1:8b"), not a Hugging Face id.
func OllamaTag(name string) bool {
	return strings.Contains(name, ":") && !strings.Contains(name, "/")
}

// ollamaEntry is the entry an ollama tag names. ollama's library builds a
// family's plain tags from its instruction-tuned release (gemma3:27b from
// gemma-3-27b-it, llama3.1:8b from Llama-3.1-8B-Instruct: each
// InstructRelease.Source), so a tag that reaches a pretrained entry names
// its Instruct release: that release's own entry when the catalog has one
// (mixtral:8x7b, Mixtral-8x7B-Instruct-v0.1), else the pretrained entry,
// whose FromName then serves the tuned checkpoint (instructVariant).
func ollamaEntry(name string) (int, bool) {
	if !OllamaTag(name) {
		return 0, false
	}
	i, ok := catalog.byTag[strings.ToLower(name)]
	if !ok {
		if i, _, ok = lookupTrimmed(name); !ok {
			return 0, false
		}
	}
	if repo := catalog.entries[i].Instruct.Repo; repo != "" {
		if j, ok := catalog.byKey[normalize(baseName(repo))]; ok {
			return j, true
		}
	}
	return i, true
}

// lookupTrimmed is lookupIndex with whether a tuned release's ending
// (modelVariants) was dropped on the way to the entry.
func lookupTrimmed(name string) (i int, tuned, ok bool) {
	key := normalize(baseName(name))
	for {
		if i, ok := catalog.byKey[key]; ok {
			return i, tuned, true
		}
		if i, ok := catalog.byRelease[key]; ok {
			return i, true, true
		}
		trimmed := false
		for _, s := range variantSuffixes {
			if len(key) > len(s) && strings.HasSuffix(key, s) {
				key = strings.TrimSuffix(key, s)
				tuned = tuned || modelVariants[s]
				trimmed = true
				break
			}
		}
		if !trimmed {
			return 0, false, false
		}
	}
}

// FromName is the catalog model a request names (catalog name, alias,
// Hugging Face id or a checkpoint's repository), with cfg's fields
// overriding the catalog config's when cfg is given.
func FromName(name string, cfg map[string]any) (*Model, error) {
	m := Lookup(name)
	if m == nil {
		return nil, unknownModel(name)
	}
	// An ollama tag names ollama's build of a release, never a Hugging
	// Face repository, though its key may equal one ("llama3.1:8b").
	tag, tunedRepo := instructVariant(m, name), ""
	if !tag {
		m.NamedCheckpoint = namedCheckpoint(m.Checkpoints, name)
		if m.NamedCheckpoint < 0 {
			tunedRepo = namedVariant(m, name)
		}
	}
	i, _ := lookupIndex(name)
	e := &catalog.entries[i]
	e.nameRelease(m, name, tag, tunedRepo)
	// The release served publishes its own config where the catalog
	// records one (Qwen/Qwen2.5-7B-Instruct: 32768 positions where the
	// base model has 131072): plan that one, whose limits engines read.
	config := e.Config
	if e.servesRelease(m) {
		m, config = e.releaseModel(m), e.releaseConfig
	}
	if cfg == nil {
		return m, nil
	}
	// Config fields override the catalog's: merge and recompute.
	merged := map[string]any{}
	for k, v := range config {
		merged[k] = v
	}
	for k, v := range cfg {
		merged[k] = v
	}
	o, err := FromConfig(merged)
	if err != nil {
		return nil, err
	}
	o.Name = m.Name
	o.Checkpoints, o.NamedCheckpoint = m.Checkpoints, m.NamedCheckpoint
	o.Releases = m.Releases
	o.Source = m.Source + " with config overrides"
	return o, nil
}

// modelVariants are the name endings of a publisher's tuned releases that
// share the catalog entry's architecture but not its weights: the
// instruction-tuned and chat models ("google/gemma-3-27b-it" beside the
// catalog's "google/gemma-3-27b-pt").
var modelVariants = map[string]bool{"instruct": true, "chat": true, "it": true}

// variantRepo is the Hugging Face repository of the tuned release a name
// means when it reached entry e only by dropping a modelVariants ending
// (tuned): the name itself when it is an id (org/name, the user's own);
// for a bare name, the entry's instruction-tuned release (Llama-2-7b-chat
// serves meta-llama/Llama-2-7b-chat-hf), never a repository made up from
// the name (Qwen3-8B-Instruct is no repository: Qwen3-8B is itself the
// post-trained model); "" otherwise.
func variantRepo(name string, e CatalogEntry, tuned bool) string {
	switch {
	case !tuned:
		return ""
	case strings.Contains(name, "/"):
		return name
	}
	return e.Instruct.Repo
}

// untunedNote is the note of a request that named a tuned release of
// entry e by a bare name when e lists none (variantRepo ""): the plan
// serves the entry's own checkpoints and says so.
func untunedNote(name string, e CatalogEntry, served string) string {
	return fmt.Sprintf("%s: the catalog knows no instruction-tuned release of %s apart from %s"+untunedServed, name, e.Name, served)
}

// The words of the notes that say which release an engine serves
// (instructVariant, namedVariant, untunedNote), and what a training
// answer says in their place (TrainingNote): a training run serves
// nothing, it trains that release.
const (
	servesWord     = "serves "
	trainsWord     = "trains "
	untunedServed  = ", which is served; give a Hugging Face id (org/name) to serve another repository"
	untunedTrained = ", which is trained; give a Hugging Face id (org/name) to train another repository"
)

// TrainingNote is note, one of a model's Notes, as a training answer says
// it: "serves google/gemma-3-27b-it, ..." becomes "trains
// google/gemma-3-27b-it, ..."; any other note unchanged.
func TrainingNote(note string) string {
	if rest, ok := strings.CutPrefix(note, servesWord); ok {
		return trainsWord + rest
	}
	if head, ok := strings.CutSuffix(note, untunedServed); ok {
		return head + untunedTrained
	}
	return note
}

// instructVariant makes the instruction-tuned release of m's entry the
// checkpoint an ollama tag serves (ollamaEntry), when the catalog has no
// entry of its own for it, and says whether it did: "gemma3:27b" serves
// google/gemma-3-27b-it, not the pretrained google/gemma-3-27b-pt whose
// config the catalog holds.
func instructVariant(m *Model, name string) bool {
	i, ok := ollamaEntry(name)
	if !ok {
		return false
	}
	e := catalog.entries[i].CatalogEntry
	if e.Instruct.Repo == "" || len(m.Checkpoints) == 0 {
		return false
	}
	own := m.Checkpoints[0]
	cks := append(append([]Checkpoint(nil), m.Checkpoints...), Checkpoint{
		Quant: own.Quant, Repo: e.Instruct.Repo, Source: "https://huggingface.co/" + e.Instruct.Repo, Release: TunedRelease,
		Notes: fmt.Sprintf("the instruction-tuned release ollama's %s is built from (%s); the catalog's config is %s's, the same architecture", name, e.Instruct.Source, own.Repo),
	})
	m.Checkpoints, m.NamedCheckpoint = cks, len(cks)-1
	m.Notes = append(m.Notes, fmt.Sprintf(servesWord+"%s, the instruction-tuned release ollama's %s names; its shape is the catalog's %s (%s)", e.Instruct.Repo, name, m.Name, own.Repo))
	return true
}

// namedVariant makes the tuned release a request named (variantRepo) the
// checkpoint a Hugging Face engine serves at the float level of m's own
// release, so that "gemma-3-27b-it" serves google/gemma-3-27b-it, not the
// pretrained google/gemma-3-27b-pt whose config the catalog holds, and
// returns that release's repository; "" when it served none.
func namedVariant(m *Model, name string) string {
	i, tuned, ok := lookupTrimmed(name)
	if !ok {
		return ""
	}
	e := catalog.entries[i].CatalogEntry
	repo := variantRepo(name, e, tuned)
	if tuned && repo == "" && len(m.Checkpoints) > 0 {
		m.Notes = append(m.Notes, untunedNote(name, e, m.Checkpoints[0].Repo))
	}
	if repo == "" || len(m.Checkpoints) == 0 || m.Checkpoints[0].IsGGUF() {
		return ""
	}
	own := m.Checkpoints[0]
	if !floatQuant(own.Quant) {
		return ""
	}
	cks := append(append([]Checkpoint(nil), m.Checkpoints...), Checkpoint{
		Quant: own.Quant, Repo: repo, Source: "https://huggingface.co/" + repo, Release: TunedRelease,
		Notes: fmt.Sprintf("the tuned release the request named; the catalog's config is %s's, the same architecture", own.Repo),
	})
	m.Checkpoints, m.NamedCheckpoint = cks, len(cks)-1
	m.Notes = append(m.Notes, fmt.Sprintf(servesWord+"%s, the release named; its shape is the catalog's %s (%s)", repo, m.Name, own.Repo))
	return repo
}

// HintGiveModel is what an unknown model's message asks for instead, in
// the request's members; a front end with other words for them rewrites
// exactly this phrase (internal/cli OptionWords).
const HintGiveModel = "give params, config or path instead"

func unknownModel(name string) error {
	if tags := ollamaFamilyTags(name); len(tags) > 0 {
		return errs.New(errs.UnknownModel, "model %q is not in the catalog; an ollama name takes its size tag: %s", name, strings.Join(tags, ", "))
	}
	s := Suggest(name, 3)
	if len(s) == 0 {
		return errs.New(errs.UnknownModel, "model %q is not in the catalog; %s", name, HintGiveModel)
	}
	return errs.New(errs.UnknownModel, "model %q is not in the catalog; did you mean %s?", name, strings.Join(s, ", "))
}

// ollamaSize is the size part of a catalog name after its family ("8B",
// "0.5B"): what an ollama tag writes after the colon, lower case.
var ollamaSize = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[bmBM]$`)

// ollamaFamilyTags is, for an ollama family written without its size
// ("llama3.1", or "llama3.1:latest", the tag ollama runs for it), the
// family's tags that resolve to catalog entries ("llama3.1:8b",
// "llama3.1:70b", ...), smallest first: an entry whose name is the family
// then a bare size (Llama-3.1-8B; not Qwen2.5-VL-7B-Instruct). Which
// size :latest is, ollama's library says, not the catalog; nil when name
// is no such family.
func ollamaFamilyTags(name string) []string {
	family := strings.TrimSuffix(strings.ToLower(name), ":latest")
	key := normalize(family)
	if strings.ContainsAny(family, ":/") || len(key) < 3 {
		return nil
	}
	type tag struct {
		name   string
		params int64
	}
	var tags []tag
	for _, e := range catalog.entries {
		size, ok := afterFamily(e.Name, key)
		if !ok || !ollamaSize.MatchString(size) {
			continue
		}
		t := family + ":" + strings.ToLower(size)
		if _, ok := ollamaEntry(t); ok && !slices.ContainsFunc(tags, func(x tag) bool { return x.name == t }) {
			tags = append(tags, tag{t, e.model.Params})
		}
	}
	sort.SliceStable(tags, func(a, b int) bool { return tags[a].params < tags[b].params })
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.name
	}
	return out
}

// afterFamily is what follows, in name, the characters whose normalized
// form is key, with the separator after them dropped ("Llama-3.1-8B",
// "llama31" -> "8B"); ok is false when name does not start with key.
func afterFamily(name, key string) (string, bool) {
	seen := 0
	for i, r := range name {
		if seen == len(key) {
			return strings.TrimLeft(name[i:], "-_ "), true
		}
		if n := normalize(string(r)); n != "" {
			if key[seen] != n[0] {
				return "", false
			}
			seen++
		}
	}
	return "", false
}

// Suggest returns up to n catalog names closest to name (edit distance over
// the normalized keys).
func Suggest(name string, n int) []string {
	key := normalize(baseName(name))
	if key == "" {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	best := map[int]int{}
	for k, i := range catalog.byKey {
		d := suggestDistance(key, k)
		if old, ok := best[i]; !ok || d < old {
			best[i] = d
		}
	}
	var cs []cand
	limit := max(3, len(key)/2)
	for i, d := range best {
		if d <= limit {
			cs = append(cs, cand{catalog.entries[i].Name, d})
		}
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].d != cs[b].d {
			return cs[a].d < cs[b].d
		}
		if ga, gb := generation(cs[a].name), generation(cs[b].name); ga != gb {
			return ga > gb
		}
		return cs[a].name < cs[b].name
	})
	var out []string
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// generation is the first number of a catalog name, the family's version
// ("Llama-3.3-70B-Instruct" 3.3, "Qwen2.5-72B" 2.5, "Llama-4-Scout-…" 4),
// 0 when it has none. Suggest ranks names equally close by it, newest
// first: "llama" is one edit from every Llama, and sorted alphabetically
// its suggestions were three Llama 2 models. The catalog records no
// release dates; a family's version number rises with its releases. For
// a name whose first number is its size ("gpt-oss-120b") the larger
// comes first, which orders nothing that matters.
func generation(name string) float64 {
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return 0
	}
	num := generationNumber.FindString(name[i:])
	v, _ := strconv.ParseFloat(num, 64)
	return v
}

// generationNumber is a version number: digits, then a point and digits.
var generationNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?`)

// suggestDistance is how far a typed key is from a catalog key: their edit
// distance, or, when the catalog key is the start of the typed one (a
// release or variant suffix the catalog does not list:
// "Qwen3-30B-A3B-Instruct-2507" for Qwen3-30B-A3B), one more than the edit
// distance of that start, so that a longer shared prefix wins over a
// shorter name that happens to be a few edits away ("Qwen2.5-72B").
// The other way round, a typed key that starts a catalog key is a family
// named without its size ("gpt-oss" for gpt-oss-20b and gpt-oss-120b,
// "nemotron-h"), also one; and one inside a catalog key ("oss-120b"), two.
func suggestDistance(key, k string) int {
	d := editDistance(key, k)
	switch {
	case len(k) >= 4 && len(k) < len(key) && strings.HasPrefix(key, k):
		d = min(d, 1)
	case len(key) >= 4 && strings.HasPrefix(k, key):
		d = min(d, 1)
	case len(key) >= 5 && strings.Contains(k, key):
		d = min(d, 2)
	}
	return d
}

// normalize folds case and drops every character but letters and digits, so
// "Llama-3.1-70B", "llama 3.1 70b" and "LLAMA_3.1_70B" are one key.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// baseName drops a Hugging Face organisation prefix ("meta-llama/").
func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// editDistance is the Levenshtein distance of two short ASCII keys.
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
