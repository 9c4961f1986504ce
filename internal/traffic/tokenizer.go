package traffic

import (
	"reflect"

	"github.com/sagebench/sagebench/internal/tokenizer"
)

var llmShapeType = reflect.TypeFor[LLMShape]()

// UseTokenizer gives every LLMShape reachable from cfg (a pointer to a
// Q's config: its fields, nested structs, pointers and slices) the run's
// tokenizer, in which a prompt dataset is measured so that its lengths
// are the ones the target counts. Config resolution calls it once,
// before the flags and Validate; a shape whose tokenizer changes after it
// was compiled is compiled again, so no order is to be remembered.
func UseTokenizer(cfg any, ref *tokenizer.Ref) {
	useTokenizer(reflect.ValueOf(cfg), ref, 0)
}

func useTokenizer(v reflect.Value, ref *tokenizer.Ref, depth int) {
	if depth > 16 { // configs are shallow; a cycle through pointers stops here
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			useTokenizer(v.Elem(), ref, depth+1)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			useTokenizer(v.Index(i), ref, depth+1)
		}
	case reflect.Struct:
		if v.Type() == llmShapeType && v.CanAddr() {
			v.Addr().Interface().(*LLMShape).setTokenizer(ref)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				useTokenizer(v.Field(i), ref, depth+1)
			}
		}
	}
}

// setTokenizer has a prompt dataset measured in ref; a shape compiled in
// another tokenizer is compiled again on its next use.
func (s *LLMShape) setTokenizer(ref *tokenizer.Ref) {
	if s.tokenizer != ref {
		s.tokenizer, s.drawer = ref, nil
	}
}
