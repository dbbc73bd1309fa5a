package api

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Every export applies one order: malformed text, trailing data and a
// repeated key are invalid_json before any unknown-key or value check,
// wherever in the text each problem sits. Before, detect, models, fit,
// plan, suggest and train answered invalid_argument for an unknown key met
// before the trailing data or the repeat, while rent (which decodes its top
// level ignoring unknown keys) answered invalid_json.
func TestSyntaxProblemsOutrankShapeAndValueProblemsAtEveryExport(t *testing.T) {
	exports := map[string]func(context.Context, []byte, Env) []byte{
		"detect": Detect, "suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining,
		"models": Models, "fit": Fit, "rent": Rent,
	}
	inputs := map[string]string{
		"unknown key, trailing data":        `{"bogus_key":1} x`,
		"unknown key, repeated key":         `{"bogus_key":1,"other":1,"other":2}`,
		"unknown key repeated":              `{"bogus_key":1,"bogus_key":2}`,
		"unknown key, malformed":            `{"bogus_key":1,"other":}`,
		"unknown key, nested repeat":        `{"bogus_key":1,"detect":{"no_exec":true,"no_exec":false}}`,
		"wrong type, trailing data":         `{"filter":1,"no_exec":"x","model":1,"rent":1} x`,
		"repeat inside the unknown's value": `{"bogus_key":{"a":1,"a":2}}`,
		// A value refused before the member holding the repeat is decoded.
		"bad value, later repeat": `{"model":{"params_b":-1},"quant":"zzz","filter":1,"no_exec":1,` +
			`"detect":{"no_exec":true,"no_exec":false},"rent":{"sort":"x","sort":"y"}}`,
		"bad value, repeat in training": `{"model":{"params_b":7},"context_length":-5,"quant":"zzz","no_exec":1,` +
			`"training":{"method":"lora","method":"full"}}`,
	}
	for name, f := range exports {
		for what, in := range inputs {
			ans := f(context.Background(), []byte(in), NoEnv)
			assert.Equal(t, errs.InvalidJSON, errorCode(t, ans), "%s, %s: %s", name, what, ans)
		}
		// Without the syntax problem the unknown key is invalid_argument,
		// so the answers above are the syntax problem's.
		ans := f(context.Background(), []byte(`{"bogus_key":1}`), NoEnv)
		if name != "rent" { // rent's top level takes keys it does not know
			assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s: %s", name, ans)
		}
	}
}

// A key repeated only by letter case ("method" and "Method") names one
// field twice: the decoder matches fields ignoring case, so it is
// invalid_json as an exact repeat is (internal/strictjson). Inside a member
// decoded after the rest (training, detect, registry, a model value, rent),
// a value check that stopped first (a context_length of -5, an unknown
// quant) answered invalid_argument: the syntax check after it knew no
// types, and keys differing in case are different keys in a map. Each
// case: the repeat alone and with the value problem are invalid_json, the
// value problem alone invalid_argument.
func TestCaseOnlyRepeatOutranksValueProblemsAtEveryExport(t *testing.T) {
	exports := map[string]func(context.Context, []byte, Env) []byte{
		"suggest": SuggestQuant, "plan": PlanSharding, "train": EstimateTraining, "fit": Fit, "rent": Rent,
	}
	planning := []string{"suggest", "plan", "train"}
	const model = `"model":{"params_b":7},`
	for _, c := range []struct {
		exports      []string
		base         string // members the request needs besides the one with the repeat
		value        string // a value problem, members before the repeat
		repeat, rest string // the member holding the repeat, and the same member without it
	}{
		{append(planning, "rent"), model, `"context_length":-5,`,
			`"training":{"method":"lora","Method":"full"}`, `"training":{"method":"lora"}`},
		{append(planning, "rent"), model, `"context_length":-5,`,
			`"training":{"method":"lora","teacher":{"params_b":7,"Params_B":70}}`, `"training":{"method":"lora","teacher":{"params_b":7}}`},
		{append(planning, "rent"), model, `"quant":"zzz",`,
			`"draft_model":{"params_b":1,"PARAMS_B":2}`, `"draft_model":{"params_b":1}`},
		{planning, model, `"quant":"zzz",`,
			`"detect":{"no_exec":true,"No_Exec":false}`, `"detect":{"no_exec":true}`},
		{planning, model, `"quant":"zzz",`,
			`"registry":{"schema_version":1,"devices":[],"Devices":[]}`, `"registry":{"schema_version":1,"devices":[]}`},
		{append(planning, "rent"), "", `"quant":"zzz",`,
			`"model":{"params_b":7,"Params_B":8}`, `"model":{"params_b":7}`},
		{[]string{"rent"}, model, `"quant":"zzz",`,
			`"rent":{"sort":"price","Sort":"speed"}`, `"rent":{"sort":"price"}`},
		{[]string{"fit"}, "", `"quant":"zzz",`,
			`"detect":{"no_exec":true,"No_Exec":false}`, `"detect":{"no_exec":true}`},
		{[]string{"fit"}, "", `"context_length":-5,`,
			`"registry":{"schema_version":1,"devices":[],"Devices":[]}`, `"registry":{"schema_version":1,"devices":[]}`},
	} {
		for _, name := range c.exports {
			f := exports[name]
			for _, in := range []struct{ body, want, what string }{
				{`{` + c.base + c.repeat + `}`, errs.InvalidJSON, "the repeat alone"},
				{`{` + c.base + c.value + c.repeat + `}`, errs.InvalidJSON, "the value problem, then the repeat"},
				{`{` + c.base + c.value + c.rest + `}`, errs.InvalidArgument, "the value problem alone"},
			} {
				ans := f(context.Background(), []byte(in.body), NoEnv)
				assert.Equal(t, in.want, errorCode(t, ans), "%s, %s %s: %s", name, in.what, in.body, ans)
			}
		}
	}
}

// A syntax shape (syntaxFirst) is the type an export decodes, with members
// it decodes later typed: each field it adds must shadow a member of the
// type it embeds (the same JSON name), or the shape would walk a member
// the request does not have and miss the one it does.
func TestSyntaxShapesOnlyRetypeMembers(t *testing.T) {
	for _, shape := range []any{&planShape{}, &fitShape{}, &rentShape{}} {
		checkShadows(t, reflect.TypeOf(shape).Elem(), map[reflect.Type]bool{})
	}
}

func checkShadows(t *testing.T, st reflect.Type, seen map[reflect.Type]bool) {
	t.Helper()
	for st.Kind() == reflect.Pointer || st.Kind() == reflect.Slice {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct || seen[st] {
		return
	}
	seen[st] = true
	var added []string
	var embedded []reflect.Type
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if f.Anonymous {
			embedded = append(embedded, f.Type)
			checkShadows(t, f.Type, seen)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		added = append(added, name)
		checkShadows(t, f.Type, seen)
	}
	if len(embedded) == 0 {
		return
	}
	names := map[string]bool{}
	for _, e := range embedded {
		memberNames(e, names)
	}
	for _, a := range added {
		assert.True(t, names[a], "%s adds %q, which the types it embeds have no member of", st, a)
	}
}

// memberNames adds the JSON names of st's members, promoted ones included.
func memberNames(st reflect.Type, names map[string]bool) {
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			memberNames(f.Type, names)
			continue
		}
		names[name] = true
	}
}
