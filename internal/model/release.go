package model

import (
	"fmt"
	"strings"
)

// Release is which release of its catalog entry a checkpoint stores or a
// request names. An entry with an instruction-tuned release (Instruct)
// publishes two sets of weights of one architecture, and a plan serves the
// one the user named at every level (Model.Releases), saying so when
// only the other publishes the level (Model.ReleaseSwitch).
type Release uint8

const (
	// OwnRelease is the entry's own release: its hf_id, the pretrained
	// (base) model where the entry lists an instruction-tuned one.
	OwnRelease Release = iota
	// TunedRelease is the entry's instruction-tuned release
	// (InstructRelease.Repo), or the tuned release a request named by a
	// name ending in a modelVariants ending (namedVariant).
	TunedRelease
)

// Releases are a catalog model's releases as a request named one.
type Releases struct {
	// Named is the release the request named.
	Named Release
	// Repos are the repositories that name the releases, by Release.
	Repos [2]string
	// OwnPretrained says the entry's own release is the pretrained model
	// of an instruction-tuned release (Instruct).
	OwnPretrained bool
	// ConfigsDiffer says the instruction-tuned release publishes config
	// values of its own (InstructRelease.Config: Qwen2.5-72B-Instruct's
	// 32768 positions beside the base model's 131072), so a checkpoint of
	// one release cannot stand in for the other's: an engine loads the
	// config of the checkpoint it serves, and the plan was made on the
	// named release's.
	ConfigsDiffer bool
}

// checkpointRelease is the release of e that ck stores. Its base_model
// decides where the catalog records one (the entry's hf_id: its own;
// Instruct.Repo: the tuned release; any other repository is an error);
// otherwise the repository's own name: the instruct repository itself, or
// a name with a modelVariants ending among its words
// ("Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "gemma-3-27b-it-GGUF": the
// endings FromName drops to reach the entry, followed here by the
// quantization's words), is the tuned release; every other name, the
// entry's own. A base_model the name contradicts is an error, so that a
// catalog edit cannot give a checkpoint two releases. An entry without an
// instruct release has one release: its checkpoints are all its own
// (Llama-3.3-70B-Instruct's GGUFs).
func (e CatalogEntry) checkpointRelease(ck Checkpoint) (Release, error) {
	byName := OwnRelease
	if e.Instruct.Repo != "" && !strings.EqualFold(ck.Repo, e.HFID) &&
		(strings.EqualFold(ck.Repo, e.Instruct.Repo) || tunedName(ck.Repo)) {
		byName = TunedRelease
	}
	if ck.BaseModel == "" {
		return byName, nil
	}
	var byBase Release
	switch {
	case e.Instruct.Repo != "" && strings.EqualFold(ck.BaseModel, e.Instruct.Repo):
		byBase = TunedRelease
	case strings.EqualFold(ck.BaseModel, e.HFID):
		byBase = OwnRelease
	default:
		return 0, fmt.Errorf("checkpoint %s: base_model %s is neither the entry's hf_id nor its instruct repo", ck.Repo, ck.BaseModel)
	}
	if byBase != byName {
		return 0, fmt.Errorf("checkpoint %s: base_model %s names the %s, the repository's name the %s", ck.Repo, ck.BaseModel, byBase, byName)
	}
	return byBase, nil
}

// String names the release in prose.
func (r Release) String() string {
	if r == TunedRelease {
		return "instruction-tuned release"
	}
	return "entry's own release"
}

// tunedName reports whether a repository's name holds a modelVariants
// ending as one of its words (split at every character that is not a
// letter or digit).
func tunedName(repo string) bool {
	words := strings.FieldsFunc(strings.ToLower(baseName(repo)), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	for _, w := range words {
		if modelVariants[w] {
			return true
		}
	}
	return false
}

// withReleases is e's checkpoints, each with its release
// (checkpointRelease).
func (e CatalogEntry) withReleases() ([]Checkpoint, error) {
	if len(e.Checkpoints) == 0 {
		return nil, nil
	}
	cks := append([]Checkpoint(nil), e.Checkpoints...)
	for i := range cks {
		r, err := e.checkpointRelease(cks[i])
		if err != nil {
			return nil, err
		}
		cks[i].Release = r
	}
	return cks, nil
}

// ReleaseSwitch is the warning a plan's answer carries when ck, the
// checkpoint an engine serves, is of another release than the one the
// request named (Releases.Named): "no int4 checkpoint of
// meta-llama/Llama-3.1-8B is published; serves
// hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4, the instruction-tuned
// release's (meta-llama/Llama-3.1-8B-Instruct)". what names what the named
// release does not publish ("int4 checkpoint"). "" when ck is nil or of
// the named release.
func (m *Model) ReleaseSwitch(ck *Checkpoint, what string) string {
	if ck == nil || ck.Release == m.Releases.Named {
		return ""
	}
	return fmt.Sprintf("no %s of %s is published; serves %s, %s: another release's weights of the same architecture",
		what, m.releaseRepo(m.Releases.Named), ck.Repo, m.releaseOf(ck.Release))
}

// releaseRepo is the repository that names release r of m's entry,
// m.Name when the catalog has none.
func (m *Model) releaseRepo(r Release) string {
	if s := m.Releases.Repos[r]; s != "" {
		return s
	}
	return m.Name
}

// releaseOf says whose checkpoint one of release r is.
func (m *Model) releaseOf(r Release) string {
	switch {
	case r == TunedRelease:
		return fmt.Sprintf("the instruction-tuned release's (%s)", m.releaseRepo(r))
	case m.Releases.OwnPretrained:
		return fmt.Sprintf("the pretrained release's (%s)", m.releaseRepo(r))
	}
	return fmt.Sprintf("the catalog entry's own release's (%s)", m.releaseRepo(r))
}

// nameRelease records on m, a model of entry e that FromName resolved
// from name, the release the request named (Releases.Named): an ollama tag
// (tag) or a tuned name (tunedRepo, namedVariant's) names the tuned
// release; a checkpoint's repository, that checkpoint's; any other name of
// the entry (its catalog name, aliases, hf_id), the entry's own. A request
// for the tuned release is served at the float levels by its repository
// where the catalog lists no float checkpoint of it (tunedFloat).
func (e CatalogEntry) nameRelease(m *Model, name string, tag bool, tunedRepo string) {
	m.Releases.Repos = [2]string{e.HFID, e.Instruct.Repo}
	if m.Releases.Repos[OwnRelease] == "" && len(e.Checkpoints) > 0 {
		m.Releases.Repos[OwnRelease] = e.Checkpoints[0].Repo
	}
	m.Releases.OwnPretrained = e.Instruct.Repo != ""
	m.Releases.ConfigsDiffer = shapesDiffer(e.Instruct.Config)
	switch {
	case tag:
		m.Releases.Named = TunedRelease
	case tunedRepo != "":
		m.Releases.Named, m.Releases.Repos[TunedRelease] = TunedRelease, tunedRepo
	default:
		if ck := repoNamed(m.Checkpoints, name); ck != nil {
			m.Releases.Named = ck.Release
		}
	}
	if m.Releases.Named == TunedRelease {
		e.tunedFloat(m)
	}
}

// shapesDiffer reports whether a release's own config values (cfg, over
// the entry's) change what a checkpoint of the other release holds or
// serves. torch_dtype alone does not: it is the dtype of that release's
// float files, and every checkpoint records the level it stores (Quant),
// so a GGUF or a bf16 repository of one release holds the tensors of the
// other's shapes (allenai/OLMo-2-1124-13B float32, its -Instruct
// bfloat16).
func shapesDiffer(cfg map[string]any) bool {
	for k := range cfg {
		if k != "torch_dtype" {
			return true
		}
	}
	return false
}

// repoNamed is the first of cks whose repository name is name (with or
// without its organisation); unlike namedCheckpoint it matches a GGUF
// repository that holds several files, all of one release.
func repoNamed(cks []Checkpoint, name string) *Checkpoint {
	key := normalize(baseName(name))
	for i := range cks {
		if normalize(baseName(cks[i].Repo)) == key {
			return &cks[i]
		}
	}
	return nil
}

// tunedFloat adds to m, a request for e's instruction-tuned release, that
// release's repository as its float checkpoint, at the level of the
// entry's own, when the catalog lists no 16- or 32-bit checkpoint of it
// (ggml-org/gemma-3-27b-it-GGUF planned at bf16 serves
// google/gemma-3-27b-it, as the tag gemma3:27b does: instructVariant).
func (e CatalogEntry) tunedFloat(m *Model) {
	if e.Instruct.Repo == "" || len(m.Checkpoints) == 0 {
		return
	}
	own := m.Checkpoints[0]
	if own.IsGGUF() || !floatQuant(own.Quant) {
		return
	}
	for _, ck := range m.Checkpoints {
		if ck.Release == TunedRelease && !ck.IsGGUF() && floatQuant(ck.Quant) {
			return
		}
	}
	m.Checkpoints = append(append([]Checkpoint(nil), m.Checkpoints...), Checkpoint{
		Quant: own.Quant, Repo: e.Instruct.Repo, Source: "https://huggingface.co/" + e.Instruct.Repo, Release: TunedRelease,
		Notes: fmt.Sprintf("the instruction-tuned release the request named; the catalog's config is %s's, the same architecture", own.Repo),
	})
}

// floatQuant reports whether a checkpoint's quant is a 16- or 32-bit
// float level.
func floatQuant(q string) bool { return q == "bf16" || q == "fp16" || q == "fp32" }
