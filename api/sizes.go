package api

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// longStrings are the strings allowed past MaxFieldBytes, with their own
// bound.
var longStrings = map[reflect.Type]map[string]int{
	reflect.TypeFor[JobSpec](): {"Script": MaxScriptBytes},
}

// CheckSizes refuses a request (or a spec) with a string longer than
// MaxFieldBytes or a list or map of more than MaxListEntries entries,
// naming the field by its JSON path (env[3], mounts[0].source). It walks
// every field, nested and future ones included: a hand-kept list of
// fields is how an environment entry of 70 KB got through. The controller
// applies it to every user-plane body, and jobspec.Validate to a spec.
func CheckSizes(v any) error {
	err := walkSizes(reflect.ValueOf(v), MaxFieldBytes)
	if err == nil {
		return nil
	}
	path := strings.TrimPrefix(err.path, ".")
	return fmt.Errorf("%s %s", cmp.Or(path, "the request"), err.what)
}

// sizeError is an oversized value; its path is built as the walk
// unwinds, so a walk that finds nothing formats nothing.
type sizeError struct{ path, what string }

func (e *sizeError) in(segment string) *sizeError {
	e.path = segment + e.path
	return e
}

func walkSizes(v reflect.Value, maxBytes int) *sizeError {
	tooLong := func(n int) *sizeError {
		return &sizeError{what: fmt.Sprintf("is %d bytes long; at most %d are allowed", n, maxBytes)}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walkSizes(v.Elem(), maxBytes)
		}
	case reflect.String:
		if v.Len() > maxBytes {
			return tooLong(v.Len())
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() > maxBytes { // []byte is a string in JSON (base64)
				return tooLong(v.Len())
			}
			return nil
		}
		if v.Len() > MaxListEntries {
			return &sizeError{what: fmt.Sprintf("has %d entries; at most %d are allowed", v.Len(), MaxListEntries)}
		}
		if v.Kind() != reflect.Map {
			for i := range v.Len() {
				if err := walkSizes(v.Index(i), maxBytes); err != nil {
					return err.in(fmt.Sprintf("[%d]", i))
				}
			}
			return nil
		}
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if err := walkSizes(k, maxBytes); err != nil {
				return err.in(" (a key)")
			}
			if err := walkSizes(it.Value(), maxBytes); err != nil {
				if k.Kind() == reflect.String && k.Len() > 40 {
					return err.in("[...]") // a long key is not repeated
				}
				return err.in(fmt.Sprintf("[%v]", k))
			}
		}
	case reflect.Struct:
		for _, f := range planOf(v.Type()) {
			if err := walkSizes(v.Field(f.index), f.limit); err != nil {
				if f.anonymous {
					return err
				}
				return err.in(f.segment)
			}
		}
	}
	return nil
}

// fieldPlan is one struct field the walk visits: its index, its JSON path
// segment and its string bound.
type fieldPlan struct {
	index     int
	segment   string
	limit     int
	anonymous bool
}

// plans caches each struct type's fields to walk. Every submit walks its
// request; reading tags and skipping fields that hold no string, list or
// map once per type, not once per request, keeps the walk off the submit
// path's profile.
var plans sync.Map // reflect.Type -> []fieldPlan

func planOf(t reflect.Type) []fieldPlan {
	if p, ok := plans.Load(t); ok {
		return p.([]fieldPlan)
	}
	var p []fieldPlan
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !inJSON(f, tag) || !mayHoldSized(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		limit := MaxFieldBytes
		if n, ok := longStrings[t][f.Name]; ok {
			limit = n
		}
		p = append(p, fieldPlan{index: i, segment: "." + cmp.Or(tag, f.Name), limit: limit, anonymous: f.Anonymous})
	}
	plans.Store(t, p)
	return p
}

// mayHoldSized reports whether a value of type t can hold a string, a
// list or a map, the things the walk bounds; numbers, booleans and
// structs of only unexported fields (time.Time) cannot. seen breaks
// cycles of pointer types, which count as able.
func mayHoldSized(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer:
		return mayHoldSized(t.Elem(), seen)
	case reflect.Array:
		return t.Len() > MaxListEntries || mayHoldSized(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return true
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); inJSON(f, tag) && mayHoldSized(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// inJSON reports whether encoding/json reads field f (json tag name tag):
// exported fields, and an embedded struct of an unexported type, whose
// exported fields it promotes.
func inJSON(f reflect.StructField, tag string) bool {
	if tag == "-" {
		return false
	}
	return f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct
}
