package ledger

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// storable returns s as every store keeps it (see the package
// documentation, Text): each NUL and each byte that is not part of a
// valid UTF-8 encoding becomes U+FFFD; every other byte is kept.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// storableEntry returns e with every string made storable, sharing no
// map, slice or pointer with e. The strings are found by reflection, so
// that a member added to an entry (or to gate.Outcome) is covered. Two
// names of a map (the components) that become the same are refused:
// keeping either would drop the other's value.
func storableEntry(e Entry) (Entry, error) {
	v, err := storableValue(reflect.ValueOf(e))
	if err != nil {
		return Entry{}, err
	}
	return v.Interface().(Entry), nil
}

// storableValue returns a copy of v with every string reachable through
// its exported fields, elements, map keys and values and pointers made
// storable.
func storableValue(v reflect.Value) (reflect.Value, error) {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.String:
		out.SetString(storable(v.String()))
	case reflect.Pointer:
		if v.IsNil() {
			return out, nil
		}
		elem, err := storableValue(v.Elem())
		if err != nil {
			return out, err
		}
		out.Set(reflect.New(v.Type().Elem()))
		out.Elem().Set(elem)
	case reflect.Struct:
		out.Set(v)
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			f, err := storableValue(v.Field(i))
			if err != nil {
				return out, err
			}
			out.Field(i).Set(f)
		}
	case reflect.Slice:
		if v.IsNil() {
			return out, nil
		}
		out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
		for i := range v.Len() {
			el, err := storableValue(v.Index(i))
			if err != nil {
				return out, err
			}
			out.Index(i).Set(el)
		}
	case reflect.Map:
		if v.IsNil() {
			return out, nil
		}
		out.Set(reflect.MakeMapWithSize(v.Type(), v.Len()))
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			sk, err := storableValue(k)
			if err != nil {
				return out, err
			}
			if out.MapIndex(sk).IsValid() {
				return out, fmt.Errorf("%w: two component names are the same once NUL and invalid UTF-8 are replaced: %+q", errInvalidEntry, fmt.Sprint(sk))
			}
			val, err := storableValue(v.MapIndex(k))
			if err != nil {
				return out, err
			}
			out.SetMapIndex(sk, val)
		}
	default:
		out.Set(v)
	}
	return out, nil
}
