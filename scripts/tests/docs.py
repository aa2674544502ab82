#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The documentation check, run by scripts/tests/docs.sh (make check).

1. Every ethtool -S counter name (the string tables the driver hands to
   ethtool_puts()/ethtool_sprintf()), every module parameter
   (module_param*) and every devlink parameter the driver registers is
   named, as ``name``, in its page: counters and the driver's parameters
   in octep_ipsec.rst, the model's parameters in octep_sim.rst, devlink
   parameters in the devlink page.
2. Every .rst under Documentation/ parses with docutils without an error
   or a warning (kernel-only roles and directives are accepted as no-ops).
3. octep_ipsec.rst is under 500 lines, README.md under 150.
   Every image an .rst shows (``.. figure::``, ``.. image::``) is a file
   beside it, and a PNG if it says .png.
4. Self-test: the counter check fails on a copy of octep_ipsec.rst with one
   counter's mention removed, the parse check fails on a broken title, and
   the image check on a figure that is not there.

One line per check; exit status 1 if any check failed.
"""
import glob
import io
import os
import re
import sys
import tempfile

DRV = 'drivers/net/ethernet/octep_ipsec'
SIM = 'drivers/net/octep_sim'
RST = 'Documentation/networking/device_drivers/ethernet/octep_ipsec.rst'
SIM_RST = 'Documentation/networking/device_drivers/ethernet/octep_sim.rst'
DL_RST = 'Documentation/networking/devlink/octep_ipsec.rst'
MIN_COUNTERS = 20
MAX_RST_LINES = 500
MAX_README_LINES = 150

failed = 0


def report(ok, what):
    global failed
    print('docs: %s %s' % ('ok  ' if ok else 'FAIL', what))
    if not ok:
        failed += 1


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def strip_comments(src):
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', src)


def sources(top, d):
    return sorted(glob.glob(os.path.join(top, d, '*.c')))


def counter_names(top):
    """The strings of every array the driver passes to the ethtool string
    helpers, wherever it is defined in the driver."""
    srcs = {p: strip_comments(read(p)) for p in sources(top, DRV)}
    arrays = set()
    for src in srcs.values():
        for m in re.finditer(r'ethtool_(?:puts|sprintf)\s*\(([^;]*)\)\s*;',
                             src, flags=re.S):
            arrays.update(re.findall(r'\b(\w+)\s*\[\s*\w+\s*\]', m.group(1)))
    names = []
    found = set()
    for src in srcs.values():
        for m in re.finditer(r'\b(\w+)\s*\[[^\]]*\]\s*=\s*\{(.*?)\}\s*;',
                             src, flags=re.S):
            if m.group(1) in arrays:
                found.add(m.group(1))
                names += re.findall(r'"([^"\\]+)"', m.group(2))
    return sorted(set(names)), sorted(arrays), sorted(found)


def module_params(top, d):
    names = []
    for p in sources(top, d):
        src = strip_comments(read(p))
        names += re.findall(
            r'\bmodule_param(?:_named|_cb|_array|_array_named|_string|'
            r'_unsafe|_named_unsafe|_hw|_hw_named)?\s*\(\s*(\w+)', src)
    return sorted(set(names))


def devlink_params(top):
    names = []
    for p in sources(top, DRV):
        src = strip_comments(read(p))
        names += re.findall(r'DEVLINK_PARAM_DRIVER\s*\(\s*\w+\s*,\s*"(\w+)"',
                            src)
        names += [g.lower() for g in
                  re.findall(r'DEVLINK_PARAM_GENERIC\s*\(\s*(\w+)', src)]
    return sorted(set(names))


def undocumented(names, rst_text):
    return [n for n in names if '``%s``' % n not in rst_text]


def check_named(what, names, rst, rst_text, minimum):
    if len(names) < minimum:
        report(False, '%s: found %d in the source, expected at least %d: '
               'the extraction is broken' % (what, len(names), minimum))
        return False
    missing = undocumented(names, rst_text)
    report(not missing, '%s: %d named in %s%s' % (
        what, len(names) - len(missing), rst,
        ''.join('\n      not documented: %s' % n for n in missing)))
    return not missing


def rst_problems(text, source):
    """docutils' warnings and errors for one document, as text."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from docutils.parsers.rst import Directive, directives, roles

    def noop_role(name, rawtext, text, lineno, inliner, options=None,
                  content=None):
        return [nodes.literal(rawtext, text)], []

    class NoopDirective(Directive):
        has_content = True
        optional_arguments = 10
        final_argument_whitespace = True
        option_spec = None

        def run(self):
            return []

    # Kernel (Sphinx) roles and directives that plain docutils lacks.
    for r in ('c:func', 'c:type', 'c:macro', 'c:member', 'c:data', 'ref',
              'doc', 'manpage', 'kbd', 'numref'):
        roles.register_local_role(r, noop_role)
    NoopDirective.option_spec = type('AnyOptions', (dict,), {
        '__missing__': lambda self, k: directives.unchanged,
        '__contains__': lambda self, k: True})()
    for d in ('kernel-doc', 'kernel-feat', 'kernel-abi', 'toctree',
              'c:function', 'c:type', 'c:macro', 'c:struct', 'only',
              'flat-table', 'kernel-include', 'code-block'):
        directives.register_directive(d, NoopDirective)
    stream = io.StringIO()
    publish_doctree(text, source_path=source, settings_overrides={
        'report_level': 2, 'halt_level': 5, 'warning_stream': stream,
        'file_insertion_enabled': False, 'raw_enabled': False})
    return stream.getvalue().strip()


def images(text):
    """The files an .rst's figure and image directives name."""
    return re.findall(r'^\s*\.\. (?:figure|image):: *(\S+)\s*$', text, re.M)


def is_image(path):
    """PATH exists and, if it says .png, starts as a PNG does."""
    try:
        with open(path, 'rb') as f:
            head = f.read(8)
    except OSError:
        return False
    return not path.endswith('.png') or head == b'\x89PNG\r\n\x1a\n'


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), '../..'))
    os.chdir(top)
    rst_text = read(RST)

    # 1. names
    counters, arrays, found = counter_names(top)
    if set(arrays) != set(found):
        report(False, 'counters: string tables not found: %s' %
               ' '.join(sorted(set(arrays) - set(found))))
    check_named('ethtool -S counters (%s)' % ' '.join(found), counters,
                RST, rst_text, MIN_COUNTERS)
    drv_params = module_params(top, DRV)
    check_named('octep_ipsec module parameters', drv_params, RST, rst_text, 1)
    sim_params = module_params(top, SIM)
    if sim_params:
        check_named('octep_sim module parameters', sim_params, SIM_RST,
                    read(SIM_RST), 1)
    else:
        report('no module parameters' in read(SIM_RST),
               'octep_sim has no module parameters, and %s says so' %
               SIM_RST)
    check_named('devlink parameters', devlink_params(top), DL_RST,
                read(DL_RST), 1)

    # 2. docutils
    for path in sorted(glob.glob('Documentation/**/*.rst', recursive=True)):
        problems = rst_problems(read(path), path)
        report(not problems, 'docutils: %s parses cleanly%s' % (
            path, ''.join('\n      ' + line
                          for line in problems.splitlines())))

    # 3. lengths
    for path, limit in ((RST, MAX_RST_LINES), ('README.md', MAX_README_LINES)):
        n = len(read(path).splitlines())
        report(n < limit, '%s: %d lines (limit: under %d)' % (path, n, limit))

    for path in sorted(glob.glob('Documentation/**/*.rst', recursive=True)):
        for img in images(read(path)):
            f = os.path.join(os.path.dirname(path), img)
            report(is_image(f), '%s: its figure %s is there' % (path, img))

    # 4. self-test: the checks can fail
    victim = next((c for c in counters if '``%s``' % c in rst_text), None)
    if victim is None:
        report(False, 'self-test: no counter to remove')
    else:
        with tempfile.NamedTemporaryFile('w', suffix='.rst') as t:
            t.write(rst_text.replace('``%s``' % victim, '``(removed)``'))
            t.flush()
            missing = undocumented(counters, read(t.name))
        before = undocumented(counters, rst_text)
        report(victim in missing and victim not in before and
               len(missing) == len(before) + 1,
               'self-test: a copy of %s without ``%s`` fails the counter '
               'check (missing: %s)' % (RST, victim,
                                        ' '.join(missing) or 'nothing'))
    bad = rst_problems('.. SPDX-License-Identifier: GPL-2.0\n\n'
                       'Title\n===\n\nText with an `unknown target`_.\n',
                       'self-test.rst')
    report(bool(bad), 'self-test: a broken .rst fails the docutils check')
    with tempfile.NamedTemporaryFile('w', suffix='.png') as t:
        t.write('not a picture\n')
        t.flush()
        report(images('Text.\n\n.. figure:: gone.png\n\n   Caption.\n') ==
               ['gone.png'] and not is_image('Documentation/gone.png') and
               not is_image(t.name),
               'self-test: a figure not there, or not a PNG, fails the '
               'image check')

    print('docs: %s' % ('all checks passed' if not failed else
                        '%d check(s) failed' % failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
