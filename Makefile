# purerdma: the two commands are `make demo` and `make test`. Everything
# else is a piece of them. The VM harness (hack/vm) installs what it needs
# with apt and keeps kernels, modules and images in .cache/ (ignored).

GO        ?= go
VMFLAGS   ?=
TESTFLAGS ?=
FUZZTIME  ?= 30s
FUZZSHORT ?= 2s
FUZZFLAGS ?=

.PHONY: all build vet unit fuzz fuzz-short vm-test test test-native demo bench vm-shell fetch clean

all: build

## build: the library and tools, without cgo, for amd64 and arm64.
build:
	CGO_ENABLED=0 $(GO) build ./...
	GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...

## vet: go vet and gofmt.
vet:
	CGO_ENABLED=0 $(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## unit: the host's unit tests; device tests skip here and run in vm-test.
unit:
	CGO_ENABLED=0 $(GO) test $(TESTFLAGS) ./...

## fuzz: every fuzz target for FUZZTIME each, one after the other
## (hack/fuzz.sh finds them); e.g. make fuzz FUZZTIME=60s FUZZFLAGS=-parallel=1.
fuzz:
	GO=$(GO) FUZZFLAGS='$(FUZZFLAGS)' sh hack/fuzz.sh $(FUZZTIME)

## fuzz-short: every fuzz target for FUZZSHORT each, the brief run of make test.
fuzz-short:
	GO=$(GO) FUZZFLAGS='$(FUZZFLAGS)' sh hack/fuzz.sh $(FUZZSHORT)

## vm-test: the integration tests in a QEMU guest with rxe0 and siw0.
## TESTFLAGS go to the test binaries, e.g. make vm-test TESTFLAGS='-run Discovery'.
vm-test:
	$(GO) run ./hack/vm test -ctools $(VMFLAGS) -- $(TESTFLAGS)

## test: everything: build, vet, unit tests, a brief fuzz run, then the VM tests.
test: build vet unit fuzz-short vm-test

## test-native: the integration tests on this host's own RDMA devices.
test-native:
	PURERDMA_NATIVE=1 $(GO) test $(TESTFLAGS) ./...

## demo: boot the VM and run an rpma server and client on rxe and siw.
demo:
	$(GO) run ./hack/vm demo -ctools $(VMFLAGS)

## bench: compare rperf with perftest's C tools in the VM, write BENCHMARKS.md.
bench:
	$(GO) run ./hack/vm bench $(VMFLAGS)

## vm-shell: boot the VM with a shell on the console, for debugging.
vm-shell:
	$(GO) run ./hack/vm shell -ctools $(VMFLAGS)

## fetch: download the kernel, build siw.ko and install QEMU, then stop.
fetch:
	$(GO) run ./hack/vm fetch $(VMFLAGS)

## clean: remove the VM cache (kernels, modules, images).
clean:
	rm -rf .cache
