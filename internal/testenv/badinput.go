package testenv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// CallMethods calls every exported method of obj, a pointer that is nil
// (such as (*cq.CQ)(nil)) or whose object is closed, with harmless
// arguments: context.Background() for a context, zero values for the rest.
// A method must not panic, and one that returns an error must return an
// error that matches want. The methods named in except are left out (the
// Close of a closed object, which succeeds). It returns the number of
// methods called, for the count of bad inputs a test tried.
func CallMethods(t *testing.T, obj any, want error, except ...string) int {
	t.Helper()
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		t.Fatalf("CallMethods: %T is not a pointer", obj)
	}
	typ := v.Type()
	state := "closed"
	if v.IsNil() {
		state = "nil"
	}
	n := 0
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if slices.Contains(except, m.Name) {
			continue
		}
		n++
		name := fmt.Sprintf("%v.%s", typ, m.Name)
		var out []reflect.Value
		if panicked := catch(func() { out = v.Method(i).Call(nilArgs(m.Type)) }); panicked != nil {
			t.Errorf("%s on %s panics: %v", name, state, panicked)
			continue
		}
		if err, ok := lastError(out); ok && !errors.Is(err, want) {
			t.Errorf("%s on %s = %v, want %v", name, state, err, want)
		}
	}
	return n
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

// BadCase is one bad input to an entry point: the call, and the sentinel
// its error must match.
type BadCase struct {
	Name string
	Call func() error
	Want error
}

// Bad is a BadCase; rows of a table read better without field names.
func Bad(name string, want error, call func() error) BadCase {
	return BadCase{Name: name, Call: call, Want: want}
}

// RunBad runs each case as a subtest: the call must return an error that
// matches its Want, without panicking. After each case usable, when not
// nil, must succeed: a bad call leaves its object working. RunBad returns
// the number of cases, for the count of bad inputs a test tried.
func RunBad(t *testing.T, usable func() error, cases []BadCase) int {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var err error
			if p := catch(func() { err = c.Call() }); p != nil {
				t.Fatalf("panics: %v", p)
			}
			if !errors.Is(err, c.Want) {
				t.Errorf("got %v, want %v", err, c.Want)
			}
			if usable == nil {
				return
			}
			if p := catch(func() { err = usable() }); p != nil || err != nil {
				t.Errorf("not usable after the bad call: %v (panic %v)", err, p)
			}
		})
	}
	return len(cases)
}

// catch runs f and returns what it panicked with, or nil.
func catch(f func()) (panicked any) {
	defer func() { panicked = recover() }()
	f()
	return nil
}
