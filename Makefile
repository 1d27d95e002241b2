# purerdma: the two commands are `make demo` and `make test`. Everything
# else is a piece of them. The VM harness (hack/vm) installs what it needs
# with apt and keeps kernels, modules and images in .cache/ (ignored).

GO        ?= go
VMFLAGS   ?=
TESTFLAGS ?=

.PHONY: all build vet unit vm-test test-pair test-pair-ci test test-all test-native demo bench vm-shell fetch clean

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

## vm-test: the integration tests in a QEMU guest with rxe0 and siw0.
## TESTFLAGS go to the test binaries, e.g. make vm-test TESTFLAGS='-run Discovery'.
vm-test:
	$(GO) run ./hack/vm test -ctools $(VMFLAGS) -- $(TESTFLAGS)

## test-pair: the two-host suite (test/twohost): guests a and b on one
## virtual wire, each test's server in a and its client in b, with the
## fault cases (loss, delay, link down, peer powered off).
test-pair:
	$(GO) run ./hack/vm pair -ctools $(VMFLAGS) -- $(TESTFLAGS)

## test-pair-ci: the two-host suite in -short mode, which leaves out what
## only repeats the rest at length (see docs/two-hosts.md).
test-pair-ci:
	$(GO) run ./hack/vm pair -ctools $(VMFLAGS) -- -test.short $(TESTFLAGS)

## test: build, vet, unit tests, the VM tests, then the two-host suite's
## CI subset.
test: build vet unit vm-test test-pair-ci

## test-all: the same with the whole two-host suite.
test-all: build vet unit vm-test test-pair

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
