package hub

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/llamahf"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
)

// safetensorsHeader fetches the 8-byte length and the JSON header of a
// single-file checkpoint with two range requests (the format:
// https://github.com/huggingface/safetensors#format), never its tensors.
func (f *fetch) safetensorsHeader(name string) ([]byte, error) {
	path := filepath.Join(f.dir(), name+headerSufix)
	if f.c.Offline {
		return f.cached(path)
	}
	lenBytes, err := f.get(name, "bytes=0-7", 8)
	if errors.Is(err, errNoEntry) {
		_ = f.store(path+missingMark, nil)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if len(lenBytes) != 8 {
		return nil, fmt.Errorf("%s of %s: the file is shorter than a safetensors header", name, f.repo)
	}
	n := binary.LittleEndian.Uint64(lenBytes)
	if n < 2 || n > maxSafetensorsHdr {
		return nil, fmt.Errorf("%s of %s: header length %d is outside [2, %d]; not a safetensors file", name, f.repo, n, maxSafetensorsHdr)
	}
	hdr, err := f.get(name, fmt.Sprintf("bytes=8-%d", 8+n-1), int64(n))
	if err != nil {
		return nil, err
	}
	if uint64(len(hdr)) != n {
		return nil, fmt.Errorf("%s of %s: got %d of the header's %d bytes: %w", name, f.repo, len(hdr), n, ErrTruncated)
	}
	b := append(lenBytes, hdr...)
	if err := f.store(path, b); err != nil {
		return nil, err
	}
	return b, nil
}

// gguf returns the model object of a GGUF file of the repository: the one
// llama-server's -hf REPO:quant loads (pickGGUF), else the only one.
func (f *fetch) gguf(quant string) (map[string]any, error) {
	name, err := f.ggufFile(quant)
	if err != nil {
		return nil, err
	}
	hdr, err := f.ggufHeader(name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"gguf_header_base64": base64.StdEncoding.EncodeToString(hdr)}, nil
}

// repoInfo is the part of /api/models/{repo}/revision/{rev} read here.
type repoInfo struct {
	Siblings []struct {
		Name string `json:"rfilename"`
	} `json:"siblings"`
}

const infoFile = "api-model.json" // cache name of the repository's file list

func (f *fetch) ggufFile(quant string) (string, error) {
	path := filepath.Join(f.dir(), infoFile)
	var b []byte
	var err error
	if f.c.Offline {
		b, err = f.cached(path)
	} else {
		u := fmt.Sprintf("%s/api/models/%s/revision/%s", f.endpoint(), f.repo, f.rev)
		b, err = f.getURL(u, "the file list", "", maxJSONFile)
		if errors.Is(err, errNoEntry) {
			err = fmt.Errorf("no model repository %s on %s: %w", f.repo, f.endpoint(), ErrNotFound)
		}
		if err == nil {
			err = f.store(path, b)
		}
	}
	if err != nil {
		return "", err
	}
	var info repoInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return "", fmt.Errorf("the file list of %s is not the Hub's JSON: %v", f.repo, err)
	}
	return pickGGUF(f.repo, quant, info)
}

// pickGGUF chooses the GGUF file to read: with quant, the file
// `llama-server -hf repo:quant` loads (llamahf.Pick: the first model file
// whose path has quant followed by "." or "-"; for a split file its first
// part, "-00001-of-0000N.gguf", whose header lists the tensors of that
// part, and llama.cpp's gguf-split writes the split.count key llama.cpp
// uses to find the others); without, the only model file.
func pickGGUF(repo, quant string, info repoInfo) (string, error) {
	var all []string
	for _, s := range info.Siblings {
		if llamahf.IsModel(s.Name) && !llamahf.IsLaterPart(s.Name) {
			all = append(all, s.Name)
		}
	}
	sort.Strings(all)
	switch {
	case len(all) == 0:
		return "", fmt.Errorf("%s has neither config.json nor a .gguf file: not a model repository planning can read", repo)
	case quant != "":
		if name := llamahf.Pick(quant, all); name != "" {
			return name, nil
		}
		return "", fmt.Errorf("%s has no .gguf file of type %s: no file name has %s followed by \".\" or \"-\", as llama-server -hf %s:%s needs (it has %s)", repo, quant, quant, repo, quant, strings.Join(all, ", "))
	case len(all) > 1:
		return "", fmt.Errorf("%s has %d .gguf files; name one type as %s:TYPE (files: %s)", repo, len(all), repo, strings.Join(all, ", "))
	}
	return all[0], nil
}

// ggufHeader fetches the start of a GGUF file in growing ranges until it
// holds the whole header (metadata and tensor list), which is as long as
// its vocabulary makes it: a few MB.
func (f *fetch) ggufHeader(name string) ([]byte, error) {
	path := filepath.Join(f.dir(), strings.ReplaceAll(name, "/", "--")+headerSufix)
	if f.c.Offline {
		return f.cached(path)
	}
	for n := int64(firstGGUFRange); ; n *= 4 {
		if n > maxGGUFHeader {
			n = maxGGUFHeader
		}
		b, err := f.get(name, fmt.Sprintf("bytes=0-%d", n-1), n)
		if err != nil {
			return nil, err
		}
		_, rerr := modelio.ReadGGUF(bytes.NewReader(b))
		if rerr == nil {
			if err := f.store(path, b); err != nil {
				return nil, err
			}
			return b, nil
		}
		short := strings.Contains(rerr.Error(), "EOF")
		if !short || int64(len(b)) < n {
			return nil, fmt.Errorf("%s of %s: %v", name, f.repo, rerr)
		}
		if n == maxGGUFHeader {
			return nil, fmt.Errorf("%s of %s: the header is longer than %d bytes", name, f.repo, maxGGUFHeader)
		}
	}
}
