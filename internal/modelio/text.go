package modelio

import (
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// FromText resolves the model the string s names (model.SpecOfText's
// rules), falling back to a file of that name when the catalog does not
// know it.
func FromText(s string) (*model.Model, error) {
	spec, err := model.SpecOfText(s)
	if err != nil {
		return nil, err
	}
	m, err := Resolve(spec)
	if spec.Name == "" || errs.CodeOf(err) != errs.UnknownModel {
		return m, err
	}
	name := strings.TrimSpace(s)
	if model.Exists(name) {
		return FromPath(model.AbsPath(name))
	}
	if model.LooksLikePath(name) {
		return nil, errs.New(errs.ModelFile, "model %q: no such file (nor a catalog name: %s)", name, errs.MessageOf(err))
	}
	return nil, err
}
