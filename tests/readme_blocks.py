#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every code block of every README compiles, or names commands that exist.

  readme_blocks.py ROOT CC [CC_ARGS...]

Walks README.md and the README.md of each folder under ROOT, takes each
fenced block and checks it by its language (TAP on stdout, one line a block):

  c       compiled alone with CC -std=c11 -Wall -Wextra -Werror -I ROOT -c;
          a block after "<!-- file: PATH -->" must also equal PATH byte for
          byte, so the README shows the file the tests build and run.
  sh      each command it runs (split at &&, ||, ;, |) is a script of this
          repository that exists and is executable, a file an earlier
          command of the block made (cc ... -o NAME) or one under build/,
          where the repository's scripts put what they build, or a program on PATH
          or one tests/install-deps installs; `tests/run CONFIG` must
          name a configuration tests/run has.
  meson, cmake
          must sit after a "<!-- consumer: NAME -->" marker that
          tests/consumers/run builds (it takes the block from the README).
  other   (no language: program output, figures) not checked.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Programs of packages tests/install-deps installs that are not the
# command it probes the package by.
OTHER_PROGRAMS = {'saquery': 'infiniband-diags',
                  'ibnetdiscover': 'infiniband-diags',
                  'ibportstate': 'infiniband-diags',
                  'sminfo': 'infiniband-diags'}
SHELL_WORDS = {'cd', 'export', 'set', 'true', 'false', 'echo'}


def readmes(root):
    """README.md at the top and in each folder, skipping build trees."""
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs
                            if not s.startswith('.') and s != 'subprojects'
                            and not os.path.exists(os.path.join(d, s, 'meson-info')))
        if 'README.md' in files:
            yield os.path.join(d, 'README.md')


def blocks(path):
    """(line number, language, text, marker before it) of each fenced block."""
    lines = open(path, encoding='utf-8').read().split('\n')
    marker, i = None, 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'<!-- (file|consumer): (\S+) -->', line)
        if m:
            marker = (m.group(1), m.group(2))
        fence = re.match(r'^```(\w*)\s*$', line)
        if fence:
            start, lang, body = i + 1, fence.group(1), []
            i += 1
            while i < len(lines) and lines[i] != '```':
                body.append(lines[i])
                i += 1
            yield start, lang, '\n'.join(body) + '\n', marker
            marker = None
        elif line.strip() and not m:
            marker = None if not line.startswith('<!--') else marker
        i += 1


def check_c(root, cc, text, marker):
    if marker and marker[0] == 'file':
        want = open(os.path.join(root, marker[1]), encoding='utf-8').read()
        if want != text:
            return 'differs from ' + marker[1]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'block.c')
        open(src, 'w', encoding='utf-8').write(text)
        r = subprocess.run(cc + ['-std=c11', '-Wall', '-Wextra', '-Werror',
                                 '-I', root, '-c', src,
                                 '-o', os.path.join(tmp, 'block.o')],
                           capture_output=True, text=True)
        if r.returncode:
            return 'does not compile:\n' + r.stderr
    return None


def configs_of_tests_run(root):
    text = open(os.path.join(root, 'tests', 'run'), encoding='utf-8').read()
    m = re.search(r'^all_configs=\(([^)]*)\)', text, re.M)
    named = set(m.group(1).split()) if m else set()
    # configurations outside the default set are documented as "(not in the
    # default set)" in its header comment: take every name the case arms know
    named |= set(re.findall(r'^#   (\w[\w-]*)\s', text, re.M))
    return named


def installed_by_us(root):
    """Programs tests/install-deps installs when missing: the command each
    of its packages is probed by, and OTHER_PROGRAMS of those packages."""
    text = open(os.path.join(root, 'tests', 'install-deps'),
                encoding='utf-8').read()
    pairs = re.findall(r'^\t\t([a-z0-9][\w.+-]*)(?: (\S+))?$', text, re.M)
    packages = {pkg for pkg, _ in pairs}
    probes = {probe for _, probe in pairs
              if probe and probe[0].isalpha() and not probe.startswith('pc:')}
    return probes | {prog for prog, pkg in OTHER_PROGRAMS.items()
                     if pkg in packages}


def check_sh(root, text):
    configs = None
    installed = installed_by_us(root)
    made = set()
    for raw in text.split('\n'):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        for cmd in re.split(r'&&|\|\||;|\|', line):
            words = cmd.split()
            while words and re.match(r'^\w+=', words[0]):
                words = words[1:]           # VAR=value cmd
            if not words:
                continue
            prog = words[0]
            if prog in ('sudo', 'nice', 'timeout', 'env'):
                words = [w for w in words[1:] if not w.startswith('-')
                         and not re.match(r'^\d+$', w)]
                if not words:
                    continue
                prog = words[0]
            if '-o' in words[:-1]:
                made.add(words[words.index('-o') + 1])
            if prog in SHELL_WORDS:
                continue
            if '/' in prog:
                name = prog[2:] if prog.startswith('./') else prog
                if name in made or os.path.basename(name) in made or \
                        name.startswith('build/'):
                    continue
                path = os.path.join(root, name)
                if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                    return f'{prog}: no such script in the repository'
                if name == 'tests/run':
                    configs = configs or configs_of_tests_run(root)
                    for w in words[1:]:
                        if not w.startswith('-') and w not in configs:
                            return f'tests/run has no configuration {w}'
            elif not shutil.which(prog) and prog not in installed:
                return f'{prog}: not a program on PATH'
    return None


def consumer_names(root):
    text = open(os.path.join(root, 'tests', 'consumers', 'run'),
                encoding='utf-8').read()
    return set(re.findall(r'(?:snippet|cmake_app)\s+"?([\w-]+)', text))


def main():
    root, cc = os.path.abspath(sys.argv[1]), sys.argv[2:]
    consumers = consumer_names(root)
    results = []
    for path in readmes(root):
        rel = os.path.relpath(path, root)
        for line, lang, text, marker in blocks(path):
            where = f'{rel}:{line} ({lang or "text"})'
            if lang == 'c':
                err = check_c(root, cc, text, marker)
            elif lang == 'sh':
                err = check_sh(root, text)
            elif lang in ('meson', 'cmake'):
                err = None if marker and marker[0] == 'consumer' and \
                    marker[1] in consumers else \
                    'not after a consumer marker that tests/consumers/run builds'
            else:
                continue
            results.append((where, err))
    print(f'1..{len(results)}')
    bad = 0
    for n, (where, err) in enumerate(results, 1):
        if err:
            bad += 1
            print(f'not ok {n} - {where}')
            print('# ' + err.replace('\n', '\n# '))
        else:
            print(f'ok {n} - {where}')
    return 1 if bad or not results else 0


if __name__ == '__main__':
    sys.exit(main())
