// Package modelio reads models: it resolves the "model" object of a
// planning request (model.Spec) into a model.Model, reading the files a
// spec names (.gguf and .safetensors headers, a directory's config.json)
// without reading weights. The model types, the layer kinds and the
// compiled-in catalog are in internal/model, which the planner imports;
// the JSON decoding of file headers and config.json is here, so that the
// planner's dependencies hold no JSON codec (issue 20).
package modelio

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Resolve turns a request's model object into a Model.
func Resolve(s model.Spec) (*model.Model, error) {
	if fetched(s) {
		return fromFetched(s)
	}
	given := 0
	for _, b := range []bool{s.Params != nil, s.ParamsB != nil, s.Name != "", s.Path != ""} {
		if b {
			given++
		}
	}
	if given > 1 {
		return nil, errs.New(errs.InvalidArgument, "model: give exactly one of params, params_b, name, path (config may accompany name or params)")
	}
	if given == 0 && s.Config == nil {
		return nil, errs.New(errs.InvalidArgument, "model: give one of params, params_b, name, path, config")
	}
	if s.Path != "" && s.Config != nil {
		return nil, errs.New(errs.InvalidArgument, "model: config cannot accompany path (the file header is authoritative)")
	}
	switch {
	case s.Params != nil:
		return model.FromParams(*s.Params, s.Config)
	case s.ParamsB != nil:
		return model.FromParamsB(*s.ParamsB, s.Config)
	case s.Name != "":
		return model.FromName(s.Name, s.Config)
	case s.Path != "":
		return FromPath(s.Path)
	default:
		m, err := model.FromConfig(s.Config)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
