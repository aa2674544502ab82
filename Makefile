# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of octep_ipsec.ko and octep_sim.ko against the pinned
# Debian kernel's headers, and the project's entry points (see README.md).
#
#   make                 build both modules (W=1, C=2 pass through to kbuild)
#   make checkpatch      checkpatch.pl --strict over our .c/.h files
#   make kernel-doc      scripts/kernel-doc -none -Wall over them
#   make coccicheck      the kernel's semantic patches (scripts/coccicheck)
#   make intree          both drivers built inside a kernel tree with clang
#                        and W=1 (scripts/intree-build)
#   make shellcheck      shellcheck over scripts/ and the selftests
#   make check           setup, build, style checks, spin model, VM selftests:
#                        CI's cut (full.txt's tests and most of the debug
#                        tier left out), about an hour with nothing cached
#   make check-full      all of them, the whole debug tier and the Debian 13
#                        tier (trixie.txt) as well (~2.5 h)
#   make check-debug     the same selftests on the debug (KASAN, lockdep) kernel
#   make check-matrix    the visit-rule tests under every setting of the
#                        block's unknowns (masked x resend_pending)
#   make check-soak      the soaks at full length on the debug kernel (~3 h)
#   make check-trixie    every IPsec test under Debian 13's userspace (trixie.txt,
#                        trixie-more.txt; make check-full runs trixie.txt's)
#   make check-fresh     setup and build from nothing in a new Debian 12 root
#   make demo            one TCP stream host -> peer through a model device
#   make model           the spin model check (spec/)
#   make compat          build against Debian's newest kernel (scripts/compat-build)
#   make check-dkms      the DKMS install tested in the VM (dkms.sh; not in check)
#   make check-deb       make deb, then its apt install and purge in the Debian
#                        13 guest (deb_install.sh; not in check: its DKMS
#                        build in the guest is slow)
#   make check-strongswan-scale  strongSwan 6 brings up, rekeys and restarts
#                        1,000 packet-offloaded children (SS_SCALE_N), timed
#   make check-ipsec-matrix  the offload matrix's ipsec_flows 0 and 1 (check: 2)
#   make check-oracle    packet offload against software ESP, 300 random
#                        rounds (ORACLE_ROUNDS) from a new seed (ORACLE_SEED)
#   make dkms-install    install both modules with DKMS for the running kernel
#   make dkms-remove     remove them (scripts/dkms-install)
#   make deb             out/deb/octep-ipsec-dkms_VERSION_all.deb, the DKMS
#                        package (debian/, scripts/deb), lintian-checked
#   make vfu             out/vfu/octep-vfu, the vfio-user server that shows
#                        a guest the block as a PCI function (scripts/vm --pci)
#   make check-pci       the PCI selftests through it (pci_probe, _reset, _gone,
#                        _aer, _unplug, _msix_few)
#   make clean           kbuild's clean; make distclean also removes out/

top := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# scripts/kernel-version is the one place the pinned kernel is named.
KVER_PKG := $(shell sed -n 's/^KVER_PKG=//p' $(top)/scripts/kernel-version)
KSRC_SERIES := $(shell sed -n 's/^KSRC_SERIES=//p' $(top)/scripts/kernel-version)
KDIR ?= /lib/modules/$(KVER_PKG)/build
KSRC ?= /usr/src/linux-source-$(KSRC_SERIES)

KBUILD_ARGS := -C $(KDIR) M=$(top) CONFIG_OCTEP_IPSEC=m CONFIG_OCTEP_SIM=m

CHECKPATCH_FILES = $(shell cd $(top) && find drivers -name '*.[ch]' \
			! -name '*.mod.c' 2>/dev/null | sort)

# The project's shell: scripts (by their #! line), CI's entry, selftests.
SHELL_FILES = $(shell cd $(top) && \
	for f in scripts/* scripts/tests/* .ci/run; do \
		[ -f "$$f" ] && head -n1 "$$f" | grep -qE '^\#!.*[/ ](ba)?sh$$' && echo "$$f"; \
	done; ls tools/testing/selftests/drivers/net/octep_ipsec/*.sh \
		tools/testing/selftests/drivers/net/octep_ipsec/*.inc)

.PHONY: all modules clean distclean checkpatch kernel-doc coccicheck intree shellcheck check check-full check-debug check-matrix check-trixie check-soak check-fresh check-dkms check-deb check-strongswan-scale check-ipsec-matrix check-oracle check-pci vfu demo model compat dkms-install dkms-remove deb help

all: modules

modules:
	$(MAKE) $(KBUILD_ARGS) modules

clean:
	$(MAKE) $(KBUILD_ARGS) clean

# The vfio-user server: a host program, built with the host's compiler
# against octep_sdp.h through the stand-in headers in vfu/include.
# octep_sim's rules.c is compiled in: the block's rules, one copy for both.
VFU_DIR := drivers/net/octep_sim/vfu
VFU_SRC := $(wildcard $(top)/$(VFU_DIR)/*.c) $(top)/drivers/net/octep_sim/rules.c
VFU_DEPS := $(VFU_SRC) $(wildcard $(top)/$(VFU_DIR)/*.h $(top)/$(VFU_DIR)/include/*/*.h) \
	$(top)/drivers/net/octep_sim/rules.h \
	$(top)/drivers/net/ethernet/octep_ipsec/octep_sdp.h

vfu: $(top)/out/vfu/octep-vfu

$(top)/out/vfu/octep-vfu: $(VFU_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror \
		-I$(top)/$(VFU_DIR)/include -o $@ $(VFU_SRC)

# out/ also holds the VM runs, initramfs and debug-kernel links that other
# runs may be using: only distclean removes it.
distclean: clean
	rm -rf $(top)/out

checkpatch:
	@test -f $(KSRC)/scripts/checkpatch.pl || \
		{ echo "checkpatch: $(KSRC) missing; run scripts/setup" >&2; exit 1; }
	@test -n "$(CHECKPATCH_FILES)" || { echo "checkpatch: no files" >&2; exit 1; }
	cd $(top) && perl $(KSRC)/scripts/checkpatch.pl --strict --no-tree \
		--show-types --color=never --summary-file -f $(CHECKPATCH_FILES)

# Every /** comment in the sources, as the kernel's own doc build reads it.
kernel-doc:
	@test -f $(KSRC)/scripts/kernel-doc || \
		{ echo "kernel-doc: $(KSRC) missing; run scripts/setup" >&2; exit 1; }
	cd $(top) && perl $(KSRC)/scripts/kernel-doc -none -Wall \
		$(CHECKPATCH_FILES) 2>&1 | { ! grep .; }

coccicheck:
	$(top)/scripts/coccicheck

intree:
	$(top)/scripts/intree-build

# Warnings and errors; SC1091: the selftests source lib.sh by a path
# computed at run time, which shellcheck does not follow.
shellcheck:
	cd $(top) && shellcheck -x -S warning -e SC1091 $(SHELL_FILES)

check:
	$(top)/scripts/check

check-full:
	$(top)/scripts/check --full

check-debug:
	$(top)/scripts/check --kernel debug

check-matrix:
	$(top)/scripts/check --matrix

check-trixie:
	$(top)/scripts/check --trixie

check-soak:
	$(top)/scripts/check --soak

check-fresh:
	$(top)/scripts/check-fresh

# The PCI path (issue 39): a --pci boot, and one whose function offers
# fewer MSI-X vectors than the guest has CPUs. Both run; either fails it.
check-pci: modules vfu
	mkdir -p $(top)/out/check-pci/msix-few
	rc=0; \
	$(top)/scripts/vm --pci --quiet --timeout 900 -- \
		$(top)/scripts/run-selftests -o $(top)/out/check-pci pci_probe.sh pci_reset.sh \
		pci_gone.sh pci_aer.sh pci_unplug.sh || rc=1; \
	VM_VFU_ARGS="-n 17" $(top)/scripts/vm --pci --quiet --timeout 900 -- \
		$(top)/scripts/run-selftests -o $(top)/out/check-pci/msix-few pci_msix_few.sh || rc=1; \
	exit $$rc

check-dkms:
	TEST_TIMEOUT=$${TEST_TIMEOUT:-3600} $(top)/scripts/check dkms.sh

check-deb:
	$(top)/scripts/check --trixie deb_install.sh

check-strongswan-scale:
	$(top)/scripts/check --trixie ipsec_strongswan_scale.sh

check-ipsec-matrix:
	$(top)/scripts/check ipsec_crypto_flows0.sh ipsec_crypto_flows1.sh \
		ipsec_packet_flows0.sh ipsec_packet_flows1.sh

check-oracle:
	ORACLE_ROUNDS=$${ORACLE_ROUNDS:-300} ORACLE_SEED=$${ORACLE_SEED:-$$(date +%s)} \
	TEST_TIMEOUT=$${TEST_TIMEOUT:-10800} VM_TIMEOUT=$${VM_TIMEOUT:-12000} \
	$(top)/scripts/check ipsec_oracle.sh

demo:
	$(top)/scripts/demo

compat:
	$(top)/scripts/compat-build

dkms-install:
	$(top)/scripts/dkms-install

dkms-remove:
	$(top)/scripts/dkms-install remove

deb:
	$(top)/scripts/deb

model:
	@if [ -f $(top)/spec/Makefile ]; then \
		$(MAKE) -C $(top)/spec check; \
	else \
		echo "model: no spec/Makefile yet"; \
	fi

help:
	@sed -n '3,/^$$/p' $(top)/Makefile
