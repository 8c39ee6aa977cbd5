# SPDX-License-Identifier: GPL-2.0-or-later
# make install / make uninstall / make check-service, included from the Makefile
# after its build rules ($(O), $(PKG_CONFIG) and the $(O)/mthpd rule come
# from there).  [earlyoom Makefile: DESTDIR and sed templating]
#
#   make install [DESTDIR=...] [PREFIX=/usr/local] [SBINDIR=...] [SYSCONFDIR=/etc]
#                [UNITDIR=...] [MANDIR=...] [DOCDIR=...] [BASHCOMPDIR=...]
#
# Installs, under $(DESTDIR):
#   $(SBINDIR)/mthpd
#   $(UNITDIR)/mthpd.service           from systemd/mthpd.service.in, paths filled in
#   $(SYSCONFDIR)/mthpd/mthpd.conf     only if there is none: an admin's edits stay
#   $(SYSCONFDIR)/mthpd/policy.d/      empty: no process is touched until a policy is put there
#   $(MANDIR)/man8/mthpd.8, $(MANDIR)/man5/mthpd.conf.5
#   $(DOCDIR)/examples/mthpd.conf, $(DOCDIR)/examples/policy.d/*.conf
#   $(BASHCOMPDIR)/mthpd               bash completion (completion/mthpd.bash),
#                                      loaded on demand by bash-completion
# The policy examples go to DOCDIR, not policy.d: every *.conf there is
# active.  Copy one to $(SYSCONFDIR)/mthpd/policy.d/ to use it.
# Nothing here runs systemctl: `systemctl daemon-reload` and
# `systemctl enable --now mthpd` are the admin's to type.
#
# SYSCONFDIR is /etc whatever PREFIX is: it is also the default that mthpd
# itself reads (--config-dir /etc/mthpd), so check-config and status without
# --config-dir find what the unit uses.  UNITDIR is systemd's own
# (pkg-config systemd), /lib/systemd/system without it.

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/mthpd
# bash-completion's own directory for $(PREFIX) (its pkg-config file says
# $(datadir)/bash-completion/completions), not asked of pkg-config: the
# package need not be installed to build or install mthpd.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)

INSTALL ?= install
POLICY_EXAMPLES := $(sort $(wildcard conf/policy.d/*.conf))

.PHONY: install uninstall check-service FORCE-UNIT

# Regenerated every time: SBINDIR and SYSCONFDIR may differ between calls.
$(O)/mthpd.service: systemd/mthpd.service.in FORCE-UNIT
	@mkdir -p $(@D)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< >$@.tmp
	mv $@.tmp $@

install: $(O)/mthpd $(O)/mthpd.service
	$(INSTALL) -D -m 0755 $(O)/mthpd $(DESTDIR)$(SBINDIR)/mthpd
	$(INSTALL) -D -m 0644 $(O)/mthpd.service $(DESTDIR)$(UNITDIR)/mthpd.service
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/mthpd/policy.d
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf (the new default is in $(DESTDIR)$(DOCDIR)/examples/)"; \
	else \
		echo "$(INSTALL) -m 0644 conf/mthpd.conf $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf"; \
		$(INSTALL) -m 0644 conf/mthpd.conf $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf; \
	fi
	$(INSTALL) -D -m 0644 man/mthpd.8 $(DESTDIR)$(MANDIR)/man8/mthpd.8
	$(INSTALL) -D -m 0644 man/mthpd.conf.5 $(DESTDIR)$(MANDIR)/man5/mthpd.conf.5
	$(INSTALL) -D -m 0644 conf/mthpd.conf $(DESTDIR)$(DOCDIR)/examples/mthpd.conf
	$(INSTALL) -d -m 0755 $(DESTDIR)$(DOCDIR)/examples/policy.d
	$(INSTALL) -m 0644 $(POLICY_EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/policy.d/
	$(INSTALL) -D -m 0644 completion/mthpd.bash $(DESTDIR)$(BASHCOMPDIR)/mthpd

# Removes what install put there, and the configuration directory only if
# it holds nothing but the untouched default mthpd.conf.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/mthpd $(DESTDIR)$(UNITDIR)/mthpd.service \
		$(DESTDIR)$(MANDIR)/man8/mthpd.8 $(DESTDIR)$(MANDIR)/man5/mthpd.conf.5 \
		$(DESTDIR)$(DOCDIR)/examples/mthpd.conf $(DESTDIR)$(BASHCOMPDIR)/mthpd \
		$(addprefix $(DESTDIR)$(DOCDIR)/examples/policy.d/,$(notdir $(POLICY_EXAMPLES)))
	@rmdir $(DESTDIR)$(DOCDIR)/examples/policy.d $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(DOCDIR) 2>/dev/null || true
	@if cmp -s conf/mthpd.conf $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/mthpd/mthpd.conf; fi
	@rmdir $(DESTDIR)$(SYSCONFDIR)/mthpd/policy.d $(DESTDIR)$(SYSCONFDIR)/mthpd 2>/dev/null || true

# The unit as `make install` writes it, checked by systemd-analyze verify
# against the binary just built (verify wants ExecStart= to exist; it needs
# no running systemd).  Exits 0 with SKIP where systemd-analyze is missing.
check-service: $(O)/mthpd
	@mkdir -p $(O)/check-service
	@sed -e 's|@SBINDIR@|$(abspath $(O))|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		systemd/mthpd.service.in >$(O)/check-service/mthpd.service
	@if ! command -v systemd-analyze >/dev/null; then \
		echo "SKIP: check-service: no systemd-analyze (apt-get install systemd)"; \
	elif systemd-analyze verify --man=no $(O)/check-service/mthpd.service; then \
		echo "PASS: check-service: systemd-analyze verify $(O)/check-service/mthpd.service"; \
	else \
		echo "FAIL: check-service: systemd-analyze verify $(O)/check-service/mthpd.service"; exit 1; \
	fi
