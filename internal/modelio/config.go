package modelio

import (
	"bytes"

	json "github.com/goccy/go-json"
)

// DecodeConfig decodes a config.json as Python's json module writes it:
// JSON plus the bare words NaN, Infinity and -Infinity (json.dumps's
// allow_nan default), which Mamba configs carry (time_step_limit [0.0,
// Infinity] in e.g. https://huggingface.co/state-spaces/mamba2-2.7b and
// Nemotron-H configs). Those words become null, outside strings only: no
// value planning reads is one of them. Only config reading accepts them;
// the request decoder stays strict JSON.
func DecodeConfig(b []byte) (map[string]any, error) {
	var cfg map[string]any
	err := json.Unmarshal(b, &cfg)
	if err == nil {
		return cfg, nil
	}
	fixed, changed := nullPythonFloats(b)
	if !changed {
		return nil, err
	}
	cfg = nil
	if err2 := json.Unmarshal(fixed, &cfg); err2 != nil {
		return nil, err2
	}
	return cfg, nil
}

// pythonFloats are the words Python's json.dumps writes for non-finite
// floats, longest first so -Infinity is not read as - and Infinity.
var pythonFloats = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

// nullPythonFloats replaces each of pythonFloats outside a JSON string by
// null, reporting whether it replaced any.
func nullPythonFloats(b []byte) ([]byte, bool) {
	var out []byte
	changed := false
	for i := 0; i < len(b); {
		if b[i] == '"' {
			end := skipString(b, i)
			out = append(out, b[i:end]...)
			i = end
			continue
		}
		matched := false
		for _, w := range pythonFloats {
			if bytes.HasPrefix(b[i:], w) {
				out = append(out, "null"...)
				i += len(w)
				matched, changed = true, true
				break
			}
		}
		if !matched {
			out = append(out, b[i])
			i++
		}
	}
	return out, changed
}
