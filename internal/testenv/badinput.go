package testenv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// NilReceiver calls every exported method of p, a typed nil pointer such as
// (*cq.CQ)(nil), with harmless arguments: context.Background() for a
// context, zero values for the rest. A method must not panic, and one that
// returns an error must return an error that matches want. It returns the
// number of methods called, for the count of bad inputs a test tried.
func NilReceiver(t *testing.T, p any, want error) int {
	t.Helper()
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || !v.IsNil() {
		t.Fatalf("NilReceiver: %T is not a nil pointer", p)
	}
	typ := v.Type()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		name := fmt.Sprintf("%v.%s", typ, m.Name)
		out, panicked := callSafe(v.Method(i), nilArgs(m.Type))
		if panicked != nil {
			t.Errorf("%s on nil panics: %v", name, panicked)
			continue
		}
		if err, ok := lastError(out); ok && !errors.Is(err, want) {
			t.Errorf("%s on nil = %v, want %v", name, err, want)
		}
	}
	return typ.NumMethod()
}

// nilArgs returns the arguments for method type mt, whose first input is
// the receiver.
func nilArgs(mt reflect.Type) []reflect.Value {
	n := mt.NumIn()
	if mt.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, 0, n)
	ctxType := reflect.TypeFor[context.Context]()
	for i := 1; i < n; i++ {
		in := mt.In(i)
		if in == ctxType {
			args = append(args, reflect.ValueOf(context.Background()))
			continue
		}
		args = append(args, reflect.Zero(in))
	}
	return args
}

// callSafe calls f and returns its results, or what it panicked with.
func callSafe(f reflect.Value, args []reflect.Value) (out []reflect.Value, panicked any) {
	defer func() { panicked = recover() }()
	return f.Call(args), nil
}

// lastError returns the last result if it is an error, as libraries put it.
func lastError(out []reflect.Value) (error, bool) {
	if len(out) == 0 {
		return nil, false
	}
	last := out[len(out)-1]
	if last.Type() != reflect.TypeFor[error]() {
		return nil, false
	}
	err, _ := last.Interface().(error)
	return err, true
}
