package ledger

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/codegenie/codegenie/gate"
)

// TestStorableEntryCoversEveryString fills every string of an Entry (every
// field, map key and value, slice element, through pointers) with NUL and
// invalid UTF-8, found by reflection so that a field added later is
// covered too; storableEntry must leave none, and must not change the
// entry it was given.
func TestStorableEntryCoversEveryString(t *testing.T) {
	t.Parallel()
	const bad = "a\x00b\xffc"
	var e Entry
	fill(reflect.ValueOf(&e).Elem(), bad)
	got, err := storableEntry(e)
	require.NoError(t, err)
	n := 0
	visit(reflect.ValueOf(got), func(s string) {
		n++
		require.True(t, utf8.ValidString(s) && !strings.ContainsRune(s, 0), "%q", s)
		require.Equal(t, "a\ufffdb\ufffdc", s)
	})
	require.Greater(t, n, 20, "every string was visited")
	visit(reflect.ValueOf(e), func(s string) { require.Equal(t, bad, s, "the entry given is unchanged") })
}

func TestStorableRefusesMergedComponents(t *testing.T) {
	t.Parallel()
	_, err := storableEntry(Entry{Outcome: gate.Outcome{Components: map[string]string{"m\x00": "1", "m\xff": "2"}}})
	require.ErrorIs(t, err, errInvalidEntry)
	require.ErrorContains(t, err, `"m\ufffd"`)
}

// fill sets every string reachable from v to s, making one element of
// every slice and map and allocating every pointer.
func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, s)
		fill(val, s)
		m.SetMapIndex(k, val)
		v.Set(m)
	}
}

// visit calls fn with every string reachable from v.
func visit(v reflect.Value, fn func(string)) {
	switch v.Kind() {
	case reflect.String:
		fn(v.String())
	case reflect.Pointer:
		if !v.IsNil() {
			visit(v.Elem(), fn)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				visit(v.Field(i), fn)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			visit(v.Index(i), fn)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			visit(k, fn)
			visit(v.MapIndex(k), fn)
		}
	}
}
