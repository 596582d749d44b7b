# The differential corpus: each script runs under satchel sh over a
# workspace and under Debian's bash with GNU coreutils, sed, grep and jq
# (LC_ALL=C) over a host directory holding the same files (corpus_test.go
# lists them); the standard output, the exit status and the files left
# must be the same. A script headed "## NAME ! REASON" is a deliberate
# difference: the test checks that it still differs, and REASON is listed
# in docs/shell.md.

## cat
cat a.txt
## cat-two
cat a.txt b.txt
## cat-n
cat -n b.txt
## cat-missing
cat nope.txt
## cat-stdin
echo hi | cat
## cat-dash
echo mid | cat a.txt - b.txt
## cat-noeol
cat noeol.txt; echo
## head-default
head lines.txt
## head-n
head -n 3 lines.txt
## head-num
head -5 lines.txt
## head-neg
head -n -17 lines.txt
## head-c
head -c 7 lines.txt; echo
## head-two
head -n 1 a.txt b.txt
## tail-default
tail lines.txt
## tail-n
tail -n 2 lines.txt
## tail-plus
tail -n +18 lines.txt
## tail-c
tail -c 4 a.txt
## wc
wc a.txt
## wc-l
wc -l a.txt
## wc-l-stdin
cat lines.txt | wc -l
## wc-w
wc -w b.txt
## wc-c
wc -c b.txt
## wc-multi
wc -l a.txt b.txt
## wc-stdin-all
printf 'a b\nc\n' | wc
## grep-basic
grep apple a.txt
## grep-n
grep -n an a.txt
## grep-i
grep -i foo mixed.txt
## grep-v
grep -v apple a.txt
## grep-c
grep -c apple a.txt
## grep-l
grep -l TODO src/main.go src/util/helper.go docs/readme.md
## grep-r
grep -r TODO src | sort
## grep-rn
grep -rn TODO . | sort
## grep-E
grep -E 'app|ban' a.txt
## grep-F
grep -F 'a.b' mixed.txt; echo $?
## grep-o
grep -o 'an' a.txt
## grep-w
grep -w foo mixed.txt
## grep-x
grep -x baz mixed.txt
## grep-include
grep -r --include='*.md' TODO . | sort
## grep-nomatch
grep zzz a.txt; echo "status $?"
## grep-missing
grep x nope.txt; echo "status $?"
## grep-q
grep -q apple a.txt && echo found
## grep-e-multi
grep -e apple -e cherry a.txt
## grep-bre-group
grep 'ap\(p\)le' a.txt
## grep-bre-plus-literal
echo 'a+b' | grep 'a+b'
## grep-stdin
cat b.txt | grep -n f
## grep-count-multi
grep -c a a.txt b.txt
## grep-dir-no-r
grep x src; echo "status $?"
## grep-h
grep -rh TODO src | sort
## grep-anchor
grep '^b' a.txt
## grep-class
grep '[0-9]\{2\}' nums.txt
## grep-ic
grep -ic FOO mixed.txt
## find-all
find . | sort
## find-name
find . -name '*.go' | sort
## find-type-f
find src -type f | sort
## find-type-d
find . -type d | sort
## find-maxdepth
find . -maxdepth 1 -type f | sort
## find-path
find . -path '*util*' | sort
## find-iname
find . -iname 'README*' | sort
## find-not
find src -type f ! -name '*.go' | sort
## find-missing
find nope; echo "status $?"
## find-exec
find src -name '*.go' -exec grep -l TODO {} \; | sort
## ls
ls
## ls-1
ls -1 src
## ls-a
ls -a src/util
## ls-R
ls -R src
## ls-file
ls a.txt b.txt
## ls-missing
ls nope; echo "status $?"
## ls-multi-dir
ls src docs
## echo
echo hello world
## echo-n
echo -n no newline; echo
## echo-e
echo -e 'a\tb'
## printf
printf '%s-%d\n' x 5 y 6
## printf-pad
printf '%5s|%-5s|\n' ab cd
## sort
sort a.txt
## sort-n
sort -n nums.txt
## sort-r
sort -r a.txt
## sort-u
sort -u a.txt
## sort-nr
sort -nr nums.txt
## sort-k
sort -t, -k2 -n data.csv
## sort-k2
sort -k2 b.txt
## sort-t-k-r
tail -n +2 data.csv | sort -t, -k3 -r
## uniq
sort a.txt | uniq
## uniq-c
sort a.txt | uniq -c
## uniq-d
sort a.txt | uniq -d
## uniq-count-sort
cat a.txt nums.txt | sort | uniq -c | sort -rn | head -3
## cut-f
cut -d, -f1 data.csv
## cut-f-multi
cut -d, -f1,3 data.csv
## cut-range
cut -d, -f2- data.csv
## cut-c
cut -c1-3 a.txt
## cut-c-list
cut -c2,4 a.txt
## tr-upper
tr a-z A-Z < a.txt
## tr-class
tr '[:lower:]' '[:upper:]' < b.txt
## tr-d
tr -d a < a.txt
## tr-s
echo 'aaa   bbb' | tr -s ' '
## tr-newline
echo 'a b c' | tr ' ' '\n'
## sed-s
sed 's/apple/APPLE/' a.txt
## sed-g
sed 's/a/_/g' a.txt
## sed-n-p
sed -n 3p lines.txt
## sed-range
sed -n '2,4p' lines.txt
## sed-d
sed '/apple/d' a.txt
## sed-dollar
sed -n '$p' lines.txt
## sed-E
sed -E 's/([a-z]+) ([a-z]+)/\2 \1/' b.txt
## sed-bre-group
sed 's/\(an\)/[\1]/g' a.txt
## sed-amp
sed 's/an/<&>/' a.txt
## sed-i
sed -i 's/apple/pear/g' a.txt; cat a.txt
## sed-multi-e
sed -e 's/a/A/' -e 's/b/B/' a.txt
## sed-semicolon
sed 's/a/A/;s/e/E/' a.txt
## sed-regex-range
sed -n '/line 3/,/line 5/p' lines.txt
## sed-neg
sed '1!d' a.txt
## sed-q
sed 3q lines.txt
## sed-eq
sed -n '/cherry/=' a.txt
## sed-delim
sed 's|/|:|g' <<< 'a/b/c'
## sed-nth
echo aaaa | sed 's/a/b/2'
## sed-i-multi
sed -i 's/o/0/' a.txt b.txt; cat a.txt b.txt
## sed-p-flag
sed -n 's/an/AN/p' a.txt
## sed-y
echo hello | sed 'y/abcdefghij/ABCDEFGHIJ/'
## awk-print
awk '{print $1}' b.txt
## awk-F
awk -F, '{print $2}' data.csv
## awk-sum
awk '{s+=$1} END {print s}' nums.txt
## awk-NR
awk 'NR==2' a.txt
## awk-v
awk -v x=5 'BEGIN {print x*2}'
## awk-pipe
cat data.csv | awk -F, 'NR>1 {print $1 ":" $3}'
## awk-nf
awk '{print NF}' b.txt
## awk-printf
awk '{printf "%-6s|\n", $1}' a.txt
## jq-dot
jq . j.json
## jq-field
jq .name j.json
## jq-r
jq -r .name j.json
## jq-array
jq '.items[].id' j.json
## jq-c
jq -c '.items[0]' j.json
## jq-map
jq -c '[.items[] | .tag]' j.json
## jq-select
jq -r '.items[] | select(.id > 1) | .tag' j.json
## jq-stdin
echo '{"a":1}' | jq .a
## jq-n
jq -n '1+2'
## jq-length
jq '.items | length' j.json
## jq-arg
jq -r --arg v hi '$v' j.json
## jq-s
printf '1 2 3' | jq -s add
## jq-keys
jq -c keys j.json
## jq-error
echo '{"a":1}' | jq '.a.b'; echo "status $?"
## diff-same
diff a.txt a.txt; echo "status $?"
## diff-u-body
diff -u a.txt b.txt | tail -n +3; echo "status $?"
## mkdir-p
mkdir -p x/y/z && echo ok
## mkdir-then-write
mkdir -p out && echo hi > out/f.txt && cat out/f.txt
## mkdir-exists
mkdir src; echo "status $?"
## mkdir-missing-parent
mkdir q/r; echo "status $?"
## rm-file
rm a.txt && ls
## rm-missing
rm nope.txt; echo "status $?"
## rm-f
rm -f nope.txt; echo "status $?"
## rm-dir
rm src; echo "status $?"
## rm-r
rm -r src && ls
## mv-file
mv a.txt c.txt && ls
## mv-into-dir
mv a.txt docs/ && ls docs
## mv-dir
mv src code && find code | sort
## mv-missing
mv nope.txt x.txt; echo "status $?"
## cp-file
cp a.txt c.txt && cat c.txt
## cp-into-dir
cp a.txt b.txt docs && ls docs
## cp-dir-no-r
cp src s2; echo "status $?"
## cp-r
cp -r src s2 && find s2 | sort
## touch
touch new.txt && ls
## touch-existing
touch a.txt && cat a.txt
## tee
echo hi | tee t.txt
## tee-a
echo more | tee -a a.txt > /dev/null; cat a.txt
## xargs
echo a.txt b.txt | xargs cat
## xargs-n
echo 1 2 3 4 | xargs -n 2 echo
## xargs-I
printf 'a\nb\n' | xargs -I{} echo item-{}
## xargs-default
printf 'x y\nz\n' | xargs
## xargs-wc
find src -name '*.go' | sort | xargs wc -l
## test-f
test -f a.txt && echo file
## test-d
[ -d src ] && echo dir
## test-e-missing
[ -e nope ] || echo missing
## test-string
[ "a" = "a" ] && echo same
## test-num
[ 3 -gt 2 ] && echo bigger
## test-z
x=; [ -z "$x" ] && echo empty
## true-false
true && echo t; false || echo f
## basename
basename src/util/helper.go
## basename-suffix
basename src/util/helper.go .go
## dirname
dirname src/util/helper.go
## seq
seq 5
## seq-range
seq 3 6
## seq-step
seq 1 3 10
## seq-s
seq -s, 4
## pipeline
cat a.txt | sort | uniq -c | sort -rn
## redirect-out
echo one > out.txt; echo two >> out.txt; cat out.txt
## redirect-in
wc -l < a.txt
## redirect-err
cat nope.txt 2> err.txt; echo "status $?"
## redirect-err-null
cat nope.txt 2>/dev/null || echo failed
## redirect-both
cat a.txt nope.txt > all.txt 2>&1; wc -l < all.txt
## heredoc
cat <<EOT
line one
line two $((1+2))
EOT
## heredoc-quoted
cat <<'EOT'
no $expansion here
EOT
## heredoc-file
cat > h.txt <<EOT
written
EOT
cat h.txt
## herestring
grep -c a <<< 'a
b
a'
## cmdsubst
echo "count: $(wc -l < a.txt)"
## cmdsubst-backtick
echo "first: `head -1 a.txt`"
## var
x=hello; echo "$x world"
## var-default
echo "${missing:-default}"
## var-length
s=abcdef; echo ${#s}
## var-substr
s=abcdef; echo ${s:1:3}
## var-strip
f=dir/file.txt; echo ${f##*/} ${f%.txt}
## arith
echo $((3 * 4 + 2))
## for-loop
for i in 1 2 3; do echo "n=$i"; done
## for-glob
for f in *.txt; do echo "$f"; done
## for-glob-dir
for f in src/*; do echo "$f"; done
## while-read
while read -r line; do echo "[$line]"; done < a.txt
## while-count
i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i
## until
i=0; until [ $i -ge 2 ]; do i=$((i+1)); echo $i; done
## if-else
if grep -q zzz a.txt; then echo yes; else echo no; fi
## case
x=foo.go; case $x in *.go) echo go;; *) echo other;; esac
## function
greet() { echo "hi $1"; }; greet bob
## function-return
f() { return 3; }; f; echo $?
## function-local
f() { local v=in; echo $v; }; v=out; f; echo $v
## and-or
false && echo no || echo yes
## subshell
(cd src && ls); ls | head -1
## cd
cd src/util && ls && basename "$(pwd)"
## cd-missing
cd nope; echo "status $?"
## glob-star
echo *.txt
## glob-question
echo ?.txt
## glob-nomatch
echo *.zzz
## glob-bracket
echo [ab].txt
## glob-nested
echo src/*/*.go
## quoting-single
echo 'a   b $x'
## quoting-double
x=1; echo "a   b $x"
## quoting-escape
echo a\ b \$x
## array
a=(x y z); echo ${a[1]} ${#a[@]}
## exit-status
sh_fn() { false; }; sh_fn; echo $?
## exit
echo before; exit 4; echo after
## set-e
set -e; echo a; false; echo b
## unknown-command
nosuchcommand --flag; echo "status $?"
## pipefail
set -o pipefail; false | true; echo $?
## pipe-status
true | false; echo $?
## write-then-read
echo data > new.txt; grep -c data new.txt
## append-loop
for i in 1 2 3; do echo $i >> n.txt; done; cat n.txt
## overwrite-file
echo replaced > a.txt; cat a.txt
## sed-then-diff
cp a.txt orig.txt; sed -i 's/apple/APPLE/' a.txt; diff orig.txt a.txt > /dev/null; echo $?
## grep-pipe-wc
grep -rn TODO . | wc -l
## read-vars
echo "a b c" | { read x y z; echo "$z $y $x"; }
## brace-expansion
echo {1..4}
## brace-list
echo file.{txt,md}
## noeol-grep
grep newline noeol.txt
## tail-noeol
tail -n 1 noeol.txt; echo
## sort-noeol
sort noeol.txt a.txt
## wc-noeol
wc -l noeol.txt
## empty-file
touch e.txt; wc -c e.txt; cat e.txt
## printf-to-file
printf 'x\ny\n' > p.txt; cat p.txt
## nested-cmdsubst
echo $(echo $(echo deep))
## export
export V=1; echo $V
## string-compare
[[ abc == a* ]] && echo match
## regex-match
[[ abc123 =~ [0-9]+ ]] && echo ${BASH_REMATCH[0]}
## ls-l ! ls -l shows no owners, permissions or link counts of a real file system: the workspace has none (satchel prints satchel, 0644/0755, and a total that counts entries)
ls -l src
## diff-u-headers ! diff -u names the files without modification times (the workspace's files have a commit time, not an mtime)
diff -u a.txt b.txt
## date ! date shows the commit clock, UTC: no -d, -r or setting the clock
date -d @0 +%Y
## pwd ! / is the workspace's root, so pwd and $PWD show paths from it
pwd
## find-order ! find lists a directory's entries sorted by name, where GNU find follows the file system's order
find src/util
## mkdir-empty ! a directory exists while a file is below it: an empty directory made by mkdir lasts until the run ends, and is not committed
mkdir emptydir; ls -d */ 2>&1 | head -5; ls
## awk-multi-file ! awk reads the files it is given as one stream: FNR counts like NR, and FILENAME is set only when there is one file
awk 'FNR==1 {print FILENAME}' a.txt b.txt
## jq-key-order ! jq prints an object's keys sorted (gojq), where jq keeps their order of input
echo '{"b":1,"a":2}' | jq -c .
## grep-backref ! regular expressions are RE2's: no backreferences in patterns
grep '\(a\)\1' <<< 'aa'
## proc-subst ! process substitution needs a host FIFO: refused before the run
cat <(echo hi)
## host-command ! no host program runs: uname is not one of satchel sh's commands
uname
## grep-A
grep -A1 banana a.txt
## grep-B
grep -n -B2 'line 5$' lines.txt
## grep-C-groups
grep -C1 -e 'line 3$' -e 'line 9$' lines.txt
## grep-A-multi
grep -A1 TODO src/main.go src/util/helper.go
## grep-context-adjacent
grep -A2 'line 1[34]$' lines.txt
## sed-i-suffix
sed -i.bak 's/apple/pear/' a.txt; cat a.txt a.txt.bak
## ls-r
ls -r
## ls-S
ls -S src/util
## diff-normal
diff a.txt b.txt; echo "status $?"
## diff-normal-add
printf 'x\ny\n' > p.txt; printf 'x\nnew\ny\nz\n' > q.txt; diff p.txt q.txt
## diff-normal-delete
printf 'a\nb\nc\n' > p.txt; printf 'a\nc\n' > q.txt; diff p.txt q.txt
## grep-P
grep -P '\d{2}' nums.txt
## sh-c
sh -c 'echo inner; exit 3'; echo "status $?"
## bash-c-args
bash -c 'echo "$0 $1 $2"' name one two
## xargs-sh-c
printf 'a.txt\nb.txt\n' | xargs -I{} sh -c 'wc -l < {}'
## sh-c-export
export GREETING=hi; sh -c 'echo $GREETING'
## sh-c-cd
cd src && sh -c 'ls'
## sh-c-write
sh -c 'echo nested > nested.txt'; cat nested.txt
## model-sed-range
sed -n '3,6p' lines.txt
## model-head-tail
head -n 8 lines.txt | tail -n 3
## model-grep-include-dot
grep -rn "TODO" --include="*.go" . | sort
## model-find-xargs-grep
find . -name "*.go" -type f | sort | xargs grep -l "TODO"
## model-wc-glob
wc -l *.txt
## model-count-sort
cut -d, -f3 data.csv | tail -n +2 | sort | uniq -c | sort -nr
## model-grep-v-comments
grep -v '^#' src/util/notes.md | grep -v '^$'
## model-sed-indent
sed 's/^/  /' b.txt
## model-cut-space
cut -d' ' -f2 b.txt
## model-tr-cr
printf 'a\r\nb\r\n' | tr -d '\r'
## model-jq-map-select
jq -r '.items[] | "\(.id): \(.tag)"' j.json
## model-jq-length-keys
jq '.items | map(.id) | add' j.json
## model-awk-sum-col
awk -F, 'NR>1 {sum += $2} END {print sum / (NR-1)}' data.csv
## model-for-files-wc
for f in src/*.go src/util/*.go; do echo "$f: $(wc -l < "$f")"; done
## model-if-file
if [ -f docs/readme.md ]; then head -1 docs/readme.md; fi
## model-cat-heredoc-append
cat >> a.txt <<'EOT'
date
EOT
tail -n 2 a.txt
## model-sed-replace-file-multi
sed -i 's/TODO/DONE/g' src/main.go src/util/helper.go && grep -rn DONE src | sort
## model-grep-count-total
grep -ro TODO . | wc -l
## model-ls-grep
ls src/util | grep '\.go$'
## model-find-maxdepth-name
find . -maxdepth 2 -name '*.md' | sort
## model-printf-loop
for i in $(seq 1 3); do printf 'item %02d\n' "$i"; done
## model-test-and-or
[ -d nope ] && echo yes || echo no
## model-grep-w-count
grep -ow 'line' lines.txt | wc -l
## model-sort-k-numeric
sort -t, -k2,2n data.csv | head -2
## model-tee-pipe
grep apple a.txt | tee apples.txt | wc -l; cat apples.txt
## model-mv-rename-loop
for f in *.txt; do mv "$f" "${f%.txt}.text"; done; ls
## model-rm-glob
rm src/util/*.go && find src | sort
## model-diff-after-edit
cp a.txt a2.txt; sed -i '2d' a2.txt; diff a.txt a2.txt
## model-echo-redirect-mkdir
mkdir -p notes/2024 && echo "# Day" > notes/2024/day.md && cat notes/2024/day.md
## model-grep-i-l-r
grep -ril hello . | sort
