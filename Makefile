# purerdma: the two commands are `make demo` and `make test`. Everything
# else is a piece of them. The VM harness (hack/vm) installs what it needs
# with apt and keeps kernels, modules and images in .cache/ (ignored).

GO        ?= go
VMFLAGS   ?=
TESTFLAGS ?=
FUZZTIME  ?= 30s
FUZZSHORT ?= 2s
FUZZFLAGS ?=
# KERNEL is the kernel series a single guest run boots (demo, bench,
# profile, shell, the race and two-host runs): Debian 12's 6.1, 6.12 from
# its security suite, or 6.18 LTS from trixie-backports (through a private
# apt configuration under .cache/vm/apt; rxe only, no siw.ko). KERNELS are
# the series make test runs the amd64 device suite on, ARM64_KERNELS the
# ones it runs the arm64 suite on (make test-all: all three). ABI_KERNELS
# are the series whose sources make abi-check reads: Debian's archive
# has linux-source for 6.1 and 6.12, not for 6.18 (trixie-backports keeps
# 7.x's only). hack/vm resolves the newest kernel of each series through
# apt and caches every version apart.
KERNEL    ?= 6.1
KERNELS   ?= 6.1 6.12 6.18
ARM64_KERNELS ?= 6.1
ABI_KERNELS ?= 6.1 6.12
# ARM64_PKGS are the packages whose device tests make test runs in the
# arm64 guest: the verbs, connection manager and rpma suites, with the ring
# stress test (rdmacm). The rest is mostly interop with the C tools, which
# cannot run there, and rperf, which takes minutes under TCG; make test-all
# runs every package on both.
ARM64_PKGS ?= ./uverbs ./mr ./rdmacm ./rpma
# OTHER_OSES are the operating systems besides Linux that make build and
# make vet compile PORTABLE_PKGS for: there every call that would reach
# the kernel fails with errors.ErrUnsupported.
OTHER_OSES    ?= darwin windows freebsd
PORTABLE_PKGS ?= ./uverbs ./cq ./mr ./rdmacm ./rsocket ./rpma ./cmd/...

.PHONY: vm-test-amd64-kernels test-canary vm-test-exec kernel-bugs all build vet unit abi-check abi-check-host abi-generate fuzz fuzz-short vm-test vm-test-amd64 vm-test-arm64 vm-test-race vm-test-hog vm-test-soak soak vm-test-all test-pair test-pair-ci test test-all test-native demo bench profile vm-shell fetch clean

all: build

## build: the library and tools, without cgo, for amd64 and arm64; then
## the public packages and tools (PORTABLE_PKGS) for OTHER_OSES, where they
## compile against the stubs (docs/architecture.md, "Other operating
## systems").
build:
	CGO_ENABLED=0 $(GO) build ./...
	GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	for os in $(OTHER_OSES); do for arch in amd64 arm64; do \
		echo "GOOS=$$os GOARCH=$$arch"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build $(PORTABLE_PKGS) || exit 1; \
	done; done

## vet: go vet and gofmt; go vet of PORTABLE_PKGS for OTHER_OSES too.
vet:
	CGO_ENABLED=0 $(GO) vet ./...
	for os in $(OTHER_OSES); do \
		echo "GOOS=$$os"; \
		GOOS=$$os CGO_ENABLED=0 $(GO) vet $(PORTABLE_PKGS) || exit 1; \
	done
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## unit: the host's unit tests; device tests skip here and run in vm-test.
## Then test/unsupported against the stubs (the purerdma_stub tag).
unit:
	CGO_ENABLED=0 $(GO) test $(TESTFLAGS) ./...
	CGO_ENABLED=0 $(GO) test $(TESTFLAGS) -tags purerdma_stub ./test/unsupported

## abi-check: internal/abi's generated tables (hack/abigen) against the
## RDMA headers of each of ABI_KERNELS, extracted from linux-source-<series>
## into .cache/abi (hack/abicheck.sh); rows a kernel lacks are listed.
abi-check:
	GO=$(GO) sh hack/abicheck.sh $(ABI_KERNELS)

## abi-check-host: the same against this host's /usr/include (its
## linux-libc-dev), without the kernel-internal enums: the quick path.
abi-check-host:
	$(GO) run ./hack/abigen -headers /usr/include -check

## abi-generate: rewrite the tables from the newest of ABI_KERNELS (go generate
## ./internal/abi does the same once its headers are in .cache/abi).
abi-generate:
	GO=$(GO) ABIGEN_GENERATE=1 sh hack/abicheck.sh $(lastword $(ABI_KERNELS))

## conformance: our rxe, siw and mlx5 providers against rdma-core's own,
## byte for byte (docs/conformance.md): builds the C harnesses into
## .cache/conformance (hack/conformance.sh) and runs the conformance tests
## against them.
.PHONY: conformance
conformance:
	h=$$(GO=$(GO) sh hack/conformance.sh) && PURERDMA_CONFORMANCE_C=$(CURDIR)/$$h \
		PURERDMA_CONFORMANCE_MLX5=$(CURDIR)/$$(dirname $$h)/harness-mlx5 CGO_ENABLED=0 \
		$(GO) test $(TESTFLAGS) -count=1 -run 'Conformance' ./internal/provider/...

## fuzz: every fuzz target for FUZZTIME each, one after the other
## (hack/fuzz.sh finds them); e.g. make fuzz FUZZTIME=60s FUZZFLAGS=-parallel=1.
fuzz:
	GO=$(GO) FUZZFLAGS='$(FUZZFLAGS)' sh hack/fuzz.sh $(FUZZTIME)

## fuzz-short: every fuzz target for FUZZSHORT each, the brief run of make test.
fuzz-short:
	GO=$(GO) FUZZFLAGS='$(FUZZFLAGS)' sh hack/fuzz.sh $(FUZZSHORT)

## vm-test: the integration tests in QEMU guests: every package in an
## amd64 guest with rxe0, siw0 and the C tools on each of KERNELS, then
## ARM64_PKGS in an arm64 guest with rxe0 on each of ARM64_KERNELS (6.18
## has rxe0 alone on amd64 too). Each run's lines name
## its architecture and kernel. TESTFLAGS go to the test binaries, e.g.
## make vm-test TESTFLAGS='-run Discovery'.
vm-test: vm-test-amd64-kernels $(addprefix vm-test-arm64-,$(ARM64_KERNELS))

comma := ,
empty :=
space := $(empty) $(empty)

## vm-test-amd64-kernels: the amd64 suite on each of KERNELS, one guest per
## kernel from test binaries built once.
vm-test-amd64-kernels:
	$(GO) run ./hack/vm test -arch amd64 -kernel $(subst $(space),$(comma),$(strip $(KERNELS))) -ctools $(VMFLAGS) -- $(TESTFLAGS)

## vm-test-amd64: the amd64 suite on KERNEL; vm-test-amd64-6.12 on 6.12.
vm-test-amd64: vm-test-amd64-$(KERNEL)

vm-test-amd64-%:
	$(GO) run ./hack/vm test -arch amd64 -kernel $* -ctools $(VMFLAGS) -- $(TESTFLAGS)

## vm-test-arm64: ARM64_PKGS on KERNEL; vm-test-arm64-6.12 on 6.12.
vm-test-arm64: vm-test-arm64-$(KERNEL)

vm-test-arm64-%:
	$(GO) run ./hack/vm test -arch arm64 -kernel $* $(VMFLAGS) $(ARM64_PKGS) -- $(TESTFLAGS)

## vm-test-race: the shared-connection, close-race, ring stress, CQ
## resize-under-load and rpma completion-router tests
## with the race detector (test binaries built with cgo, the host's libc in
## an amd64 guest). TestLoadManyConnections, which takes 1.5 min under the
## race detector and opens connections one goroutine at a time, joins them
## in make test-all.
RACE_TESTS ?= TestLoadSharedConn|TestCloseRacesDataPath|TestRingStress|TestCQResizeUnderLoad|TestRouterGoroutines|TestRouterClose|TestMessenger
vm-test-race:
	$(GO) run ./hack/vm test -race -kernel $(KERNEL) $(VMFLAGS) ./uverbs ./rdmacm ./rpma -- -test.run '$(RACE_TESTS)' $(TESTFLAGS)

## vm-test-hog: the ring stress and the fault tests (rxe0 and siw0) with a
## CPU hog beside them in the guest (hack/vm -hog): the siw races of issue
## 20 showed only on a busy host. HOG_COUNT runs each test that many times.
HOG_TESTS ?= TestRingStress|^Test(ConnectNoListener|ConnectUnreachable|CQOverrun|DeregisterInFlight|LinkDown|PeerKilled|OutOfBounds|RemoteAccess|DeviceRemoval)$$
HOG_COUNT ?= 1
vm-test-hog:
	$(GO) run ./hack/vm test -hog 2 -kernel $(KERNEL) $(VMFLAGS) ./rdmacm ./test/faults -- -test.run '$(HOG_TESTS)' -test.count $(HOG_COUNT) $(TESTFLAGS)

## soak: test/soak for DURATION (a Go duration: 1m, 30m, 1h30m) in an
## amd64 guest of its own on KERNEL, rxe and siw side by side: connections
## made and closed over and over with verified transfers, while peers are
## killed, links flap and devices are removed; it fails when an operation
## is lost or memory, fds, mappings or RDMA resources grow, and prints a
## summary (docs/faults.md, "Soak"). The guest's limit is DURATION plus 15
## minutes, the test binary's plus 12. E.g. make soak DURATION=30m.
DURATION ?= 1m
# soak_secs prints DURATION in seconds (h, m and s units).
soak_secs = echo '$(DURATION)' | awk '{ d = $$0; t = 0; while (match(d, /^[0-9.]+[hms]/)) { u = substr(d, RLENGTH, 1); t += substr(d, 1, RLENGTH - 1) * (u == "h" ? 3600 : u == "m" ? 60 : 1); d = substr(d, RLENGTH + 1) } if (d != "" || t == 0) exit 1; printf "%d", t }'
soak:
	@secs=$$($(soak_secs)) || { echo "DURATION=$(DURATION): want a duration such as 1m, 30m or 1h30m"; exit 2; }; \
	set -x; $(GO) run ./hack/vm test -arch amd64 -kernel $(KERNEL) -timeout $$((secs + 900))s $(VMFLAGS) ./test/soak -- -soak.duration $(DURATION) -test.timeout $$((secs + 720))s $(TESTFLAGS)

## kernel-bugs: the smallest reproductions of the kernel defects we work
## around (test/kernelbugs, docs/kernel-notes.md) on KERNEL; each test
## asserts what a correct kernel does, so it fails while the defect is
## there. Not part of make test.
kernel-bugs:
	$(GO) run ./hack/vm test -arch amd64 -kernel $(KERNEL) -ctools $(VMFLAGS) ./test/kernelbugs -- $(TESTFLAGS)

## vm-test-soak: one minute of the soak, the part make test runs.
vm-test-soak:
	$(MAKE) soak DURATION=1m

## vm-test-all: vm-test with every package on arm64 too, on each of KERNELS.
vm-test-all:
	$(MAKE) vm-test ARM64_PKGS=./... ARM64_KERNELS='$(KERNELS)'

## test-canary: the uverbs, rdmacm and rpma suites on the newest 7.x
## kernel from trixie-backports (rxe0 and the C tools; no siw.ko), which no
## release of ours promises to support yet: what breaks there is what the
## next kernels will break. Not part of make test.
test-canary:
	$(GO) run ./hack/vm test -arch amd64 -kernel 7 -ctools $(VMFLAGS) ./uverbs ./rdmacm ./rpma -- $(TESTFLAGS)

## test-pair: the two-host suite (test/twohost): guests a and b on one
## virtual wire, each test's server in a and its client in b, with the
## fault cases (loss, delay, link down, peer powered off).
test-pair:
	$(GO) run ./hack/vm pair -ctools -kernel $(KERNEL) $(VMFLAGS) -- $(TESTFLAGS)

## test-pair-ci: the two-host suite in -short mode, which leaves out what
## only repeats the rest at length (see docs/two-hosts.md).
test-pair-ci:
	$(GO) run ./hack/vm pair -ctools -kernel $(KERNEL) $(VMFLAGS) -- -test.short $(TESTFLAGS)

## vm-test-exec: a user's view of cmd/rdmavm: a throw-away module
## outside the repository that imports purerdma, tested with go test
## -exec rdmavm (its own write test on rxe0 and siw0, a test that fails on
## purpose, -ctools against C rping and ibv_rc_pingpong, -pair across two
## guests) on 6.1, rdmavm's default, sharing the kernels of .cache/vm.
vm-test-exec:
	PURERDMA_EXEC_TEST=1 PURERDMA_CACHE=$${PURERDMA_CACHE:-$(CURDIR)/.cache/vm} $(GO) test -count=1 -v -run TestGoTestExec ./cmd/rdmavm

## test: build, vet, unit tests, the ABI check, a brief fuzz run, the VM tests on amd64
## and arm64, the race-detector run, the hog run, a minute of the soak, then
## the two-host suite's CI subset (what CI runs).
test: build vet unit abi-check conformance fuzz-short vm-test vm-test-race vm-test-hog vm-test-soak test-pair-ci vm-test-exec

## test-all: the same with every package on arm64 and the whole two-host suite.
test-all: build vet unit abi-check fuzz-short vm-test-all vm-test-hog test-pair vm-test-exec
	$(MAKE) vm-test-race RACE_TESTS='$(RACE_TESTS)|TestLoadManyConnections'

## test-native: the integration tests, the interop with the C tools and a
## short rperf/perftest comparison on this host's own RDMA devices, a
## ConnectX above all (hack/native.sh, docs/hardware.md): ends with PASS,
## FAIL and SKIP counts per package and the log's path under .cache/native.
## DEV=mlx5_0 picks the devices, INSTALL=1 installs missing packages with
## apt, TESTFLAGS go to go test, BENCH=0 leaves the comparison out; make
## hands variables given on its command line to the script.
test-native:
	GO=$(GO) bash hack/native.sh

## demo: boot the VM and run an rpma server and client on rxe and siw.
demo:
	$(GO) run ./hack/vm demo -ctools -kernel $(KERNEL) $(VMFLAGS)

## bench-host: user-space cost per operation, Go against rdma-core's librxe,
## libsiw and libmlx5 over the same fake rings, on the host, in time and
## in instructions (valgrind's callgrind, installed when missing); writes
## the table into docs/benchmarks-host.md (hack/benchhost.sh).
.PHONY: bench-host
bench-host:
	GO=$(GO) sh hack/benchhost.sh

## bench: compare rperf with perftest's C tools in the VM (hack/benchcmp),
## write docs/benchmarks.md (which names the kernel); make bench
## KERNEL=6.12 writes docs/benchmarks-linux-6.12.md instead; VMFLAGS="-- -aa"
## runs C in both columns (docs/benchmarks-aa*.md: the method's own noise),
## VMFLAGS="-- -cross" each column's clients against the other's servers.
bench:
	$(GO) run ./hack/vm bench -timeout 45m -kernel $(KERNEL) $(VMFLAGS)

## profile: rperf and perftest under perf record in the VM (hack/benchcmp),
## write docs/profile-report.md (docs/profile-report-linux-<series>.md for
## another KERNEL than 6.1). Choose the tests with
## VMFLAGS="-- -tests send_lat,read_lat -s 64"; VMFLAGS="-sched -- ..."
## traces the scheduler instead (docs/profile-sched-linux-<series>.md).
profile:
	$(GO) run ./hack/vm profile -timeout 30m -kernel $(KERNEL) $(VMFLAGS)

## vm-shell: boot the VM with a shell on the console, for debugging.
vm-shell:
	$(GO) run ./hack/vm shell -ctools -kernel $(KERNEL) $(VMFLAGS)

## fetch: download the kernels, build siw.ko and install QEMU, then stop.
fetch:
	for k in $(KERNELS); do $(GO) run ./hack/vm fetch -arch amd64 -kernel $$k $(VMFLAGS) || exit 1; done
	for k in $(ARM64_KERNELS); do $(GO) run ./hack/vm fetch -arch arm64 -kernel $$k $(VMFLAGS) || exit 1; done

## clean: remove the VM cache (kernels, modules, images).
clean:
	rm -rf .cache
