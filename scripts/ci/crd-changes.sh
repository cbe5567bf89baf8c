#!/usr/bin/env bash
# What a change does to the CRDs of a git repository: the logic of the GitHub Action
# (action.yml at the repository's root runs it), usable in any CI.
#
# It finds the files changed between a base revision and HEAD (`git diff --name-status -M
# MERGE-BASE HEAD`: added, modified, renamed and deleted files) that hold
# CustomResourceDefinitions, pairs each CRD of HEAD with the CRD of the same name at the base
# (a CRD moved to another file, or a renamed file, is still a change of one CRD), and for
# each:
#   - changed:  `crd-audit diff OLD NEW` (Markdown for the summary, SARIF, JSON for the
#               counts) and, when example objects are given, `crd-audit plan NEW --current OLD
#               --objects ...` (the objects the new revision makes invalid, judged as stored
#               data);
#   - new:      `crd-audit check NEW` (structural and CRD-level problems);
#   - removed:  said (a file deleted, or the CRD taken out of its file).
# Files holding several CRDs are read document by document (scripts/ci/lib.sh).
#
# Writes, in the output directory: summary.md (bounded: GitHub takes at most 1 MiB for a step
# summary; sections that do not fit are left out with a note, and all of them stay in
# sections/), sarif/crd-audit.sarif (one run per command: diff, plan, check; for
# github/codeql-action/upload-sarif) and sarif-parts/ (one log per CRD and command). Appends
# the summary to $GITHUB_STEP_SUMMARY and writes outputs to $GITHUB_OUTPUT when they are set:
#   tightened=true|false   some CRD tightens (or is removed)
#   stranded=N             objects of the examples the change makes invalid
#   stuck=N                those of them the server would refuse every write to
#   changed=N added=N removed=N errors=N
#   summary-file=PATH sarif-dir=PATH sarif-file=PATH
#
# Exit status: 0, or 1 when --fail-on says the change fails:
#   tightening (default)  a CRD tightens or is removed, objects become invalid, or a new CRD
#                         has findings of `crd-audit check`
#   invalid               objects become invalid, or a new CRD has findings
#   never                 only errors fail
# 2 on errors: crd-audit missing or failing on an input, no base revision, git failing.
#
# Options (each also read from the environment variable named after it):
#   --base REF             CRD_CHANGES_BASE: the revision to compare HEAD with (default:
#                          origin/$GITHUB_BASE_REF on a pull request, else
#                          $CRD_CHANGES_EVENT_BEFORE, the commit before a push)
#   --crd-paths GLOBS      CRD_CHANGES_CRD_PATHS: where CRDs live, one glob a line (`*` also
#                          matches `/`; a directory matches the files under it); default:
#                          every changed *.yaml, *.yml and *.json file holding a CRD
#   --objects PATHS        CRD_CHANGES_OBJECTS: example objects to plan against, files,
#                          directories or globs, one a line (paths from the repository's root)
#   --output-dir DIR       CRD_CHANGES_OUTPUT_DIR (default: $RUNNER_TEMP/crd-audit-changes,
#                          else ./crd-audit-changes); its summary.md, sections/, sarif/ and
#                          sarif-parts/ are replaced
#   --fail-on WHAT         CRD_CHANGES_FAIL_ON: tightening, invalid or never
#   --kubernetes-version X.Y  CRD_CHANGES_KUBERNETES_VERSION: for `plan` and `check`
#   --fetch                CRD_CHANGES_FETCH=true: fetch the base from origin when it is
#                          missing (a shallow checkout)
#   --crd-audit PATH       CRD_AUDIT: the binary (default: crd-audit on PATH)
# CRD_CHANGES_SUMMARY_LIMIT: the summary's bound in bytes (default 1000000).
# Needs bash 4, git, and python3 (standard library only).
set -Eeuo pipefail

if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
    echo "error: scripts/ci/crd-changes.sh needs bash 4 or newer" >&2
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/ci/lib.sh
. "$here/lib.sh"

trap 'echo "error: scripts/ci/crd-changes.sh failed at line $LINENO: $BASH_COMMAND" >&2; exit 2' ERR

usage() {
    sed -n '2,/^set -Eeuo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

# A list input: one entry a line, blank lines and `#` comments left out, spaces trimmed.
add_lines() {
    local -n into=$1
    local line
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line#"${line%%[![:space:]]*}"}
        line=${line%"${line##*[![:space:]]}"}
        if [ -n "$line" ] && [ "${line:0:1}" != "#" ]; then into+=("$line"); fi
    done <<<"$2"
}

base=${CRD_CHANGES_BASE:-}
out=${CRD_CHANGES_OUTPUT_DIR:-}
fail_on=${CRD_CHANGES_FAIL_ON:-tightening}
kube_version=${CRD_CHANGES_KUBERNETES_VERSION:-}
fetch=${CRD_CHANGES_FETCH:-false}
limit=${CRD_CHANGES_SUMMARY_LIMIT:-1000000}
crd_paths=()
objects=()
flag_crd_paths=()
flag_objects=()
while [ $# -gt 0 ]; do
    case $1 in
        --base) base=${2?--base needs a value}; shift 2 ;;
        --crd-paths) add_lines flag_crd_paths "${2?--crd-paths needs a value}"; shift 2 ;;
        --objects) add_lines flag_objects "${2?--objects needs a value}"; shift 2 ;;
        --output-dir) out=${2?--output-dir needs a value}; shift 2 ;;
        --fail-on) fail_on=${2?--fail-on needs a value}; shift 2 ;;
        --kubernetes-version) kube_version=${2?--kubernetes-version needs a value}; shift 2 ;;
        --fetch) fetch=true; shift ;;
        --crd-audit) CRD_AUDIT=${2?--crd-audit needs a value}; shift 2 ;;
        -h | --help) usage 0 ;;
        *) echo "error: unknown argument $1" >&2; usage 2 ;;
    esac
done
if [ ${#flag_crd_paths[@]} -gt 0 ]; then crd_paths=("${flag_crd_paths[@]}"); else add_lines crd_paths "${CRD_CHANGES_CRD_PATHS:-}"; fi
if [ ${#flag_objects[@]} -gt 0 ]; then objects=("${flag_objects[@]}"); else add_lines objects "${CRD_CHANGES_OBJECTS:-}"; fi
case $fail_on in
    tightening | invalid | never) ;;
    *) echo "error: --fail-on must be tightening, invalid or never, not '$fail_on'" >&2; exit 2 ;;
esac
case $fetch in true | 1 | yes) fetch=true ;; *) fetch=false ;; esac
if ! [[ $limit =~ ^[0-9]+$ ]] || [ "$limit" -lt 1024 ]; then
    echo "error: CRD_CHANGES_SUMMARY_LIMIT must be a number of bytes (1024 or more)" >&2
    exit 2
fi

crd_lib_find_tool || exit 2
crd_lib_find_python || exit 2
CRD=$CRD_AUDIT_BIN
root=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "error: $(pwd) is not in a git work tree" >&2; exit 2; }
# The output directory, absolute (the script works from the repository's root).
out=${out:-${RUNNER_TEMP:-$PWD}/crd-audit-changes}
mkdir -p -- "$out"
out=$(cd -- "$out" && pwd)
cd -- "$root"
rm -rf -- "$out/sections" "$out/sarif" "$out/sarif-parts" "$out/summary.md"
mkdir -p -- "$out/sections" "$out/sarif" "$out/sarif-parts"
work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/crd-changes.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# ---- The base revision, and the commit the change starts from.
zero=0000000000000000000000000000000000000000
if [ -z "$base" ]; then
    if [ -n "${GITHUB_BASE_REF:-}" ]; then
        base=origin/$GITHUB_BASE_REF
    elif [ -n "${CRD_CHANGES_EVENT_BEFORE:-}" ] && [ "$CRD_CHANGES_EVENT_BEFORE" != "$zero" ]; then
        base=$CRD_CHANGES_EVENT_BEFORE
    else
        echo "error: no base revision to compare HEAD with: give --base (the action's base-ref), or run on a pull_request or push event" >&2
        exit 2
    fi
fi
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null && [ "$fetch" = true ]; then
    depth=()
    if [ "$(git rev-parse --is-shallow-repository)" = true ]; then depth=(--depth=1); fi
    if [[ $base == origin/* ]]; then
        branch=${base#origin/}
        git fetch --quiet --no-tags "${depth[@]}" origin "+refs/heads/$branch:refs/remotes/origin/$branch" >&2 || true
    elif git fetch --quiet --no-tags "${depth[@]}" origin "$base" >&2 &&
        ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
        base=$(git rev-parse FETCH_HEAD) # a branch or commit of origin, fetched by name
    fi
fi
base_sha=$(git rev-parse --verify --quiet "$base^{commit}") || {
    echo "error: the base revision $base is not in this clone: fetch it (actions/checkout with fetch-depth: 0, or --fetch)" >&2
    exit 2
}
head_sha=$(git rev-parse --verify HEAD)
if from=$(git merge-base "$base_sha" "$head_sha" 2>/dev/null); then
    :
else
    # A shallow clone has no merge base. A pull request's merge commit (what actions/checkout
    # checks out) has the base as its first parent: comparing with the base is then exact.
    first_parent=$(git cat-file -p "$head_sha" | sed -n 's/^parent //p' | head -n 1)
    if [ "$first_parent" != "$base_sha" ]; then
        echo "notice: no merge base of $base and HEAD (a shallow clone?): comparing HEAD with $base itself" >&2
    fi
    from=$base_sha
fi
short_from=$(git rev-parse --short=12 "$from")
short_head=$(git rev-parse --short=12 "$head_sha")

# ---- The changed files that may hold CRDs.
wanted() {
    local path=$1 glob lower
    if [ ${#crd_paths[@]} -eq 0 ]; then
        lower=${path,,}
        case $lower in *.yaml | *.yml | *.json) return 0 ;; esac
        return 1
    fi
    for glob in "${crd_paths[@]}"; do
        glob=${glob#./}
        # shellcheck disable=SC2053 # the right side is a pattern
        if [[ $path == $glob ]] || [[ $path == "${glob%/}"/* ]]; then return 0; fi
    done
    return 1
}

git diff --name-status -z -M --no-ext-diff --no-textconv --diff-filter=AMRDT "$from" "$head_sha" -- >"$work/changes"
declare -a pair_old=() pair_new=()
while IFS= read -r -d '' status; do
    old='' new=''
    case $status in
        R*) IFS= read -r -d '' old; IFS= read -r -d '' new ;;
        A) IFS= read -r -d '' new ;;
        D) IFS= read -r -d '' old ;;
        *) IFS= read -r -d '' new; old=$new ;;
    esac
    # Each side on its own: git may pair a deleted file with an added one of similar text
    # (a rename) that --crd-paths tells apart; CRDs are paired by name below anyway.
    if [ -n "$old" ] && ! wanted "$old"; then old=''; fi
    if [ -n "$new" ] && ! wanted "$new"; then new=''; fi
    if [ -n "$old" ] || [ -n "$new" ]; then
        pair_old+=("$old")
        pair_new+=("$new")
    fi
done <"$work/changes"

# ---- The CRDs of those files, at the base and at HEAD, by name.
declare -A base_path=() base_file=() base_status=() head_path=() head_file=() head_status=()
declare -a head_order=() base_order=() notes=()
errors=0
n=0
# Where crd-audit read a file (a temporary copy) and what to call it in what it says.
declare -a rename_from=() rename_to=()

read_side() { # SIDE FILE-IN-REPO COPY DISPLAY-NAME
    local side=$1 file=$2 copy=$3 display=$4 status name path line dir
    dir=$work/$side/$n/docs
    if ! crd_lib_crds "$copy" "$dir" >"$work/$side/$n/crds.tsv" 2>"$work/$side/$n/crds.err"; then
        notes+=("error: \`$file\` could not be read: $(head -c 500 "$work/$side/$n/crds.err" | tr '\n' ' ')")
        errors=$((errors + 1))
        return
    fi
    while IFS=$'\t' read -r status name path line; do
        if [ "$path" != "$copy" ] && [ "$status" != unreadable ]; then
            rename_from+=("$path")
            rename_to+=("$display")
        fi
        if [ "$status" = template ]; then
            if [ "$side" = head ]; then
                notes+=("warning: \`$file\` (line $line): a CustomResourceDefinition with template directives (\`{{\`), no YAML until rendered: left out (render it, or leave it out of crd-paths)")
            fi
            continue
        fi
        if [ "$status" = unreadable ]; then
            if [ "$side" = head ]; then
                notes+=("error: \`$file\` (line $line): a CustomResourceDefinition crd-audit cannot read: $(head -c 500 "$path" | tr '\n' ' ')")
                errors=$((errors + 1))
            fi
            continue
        fi
        if [ "$side" = head ]; then
            if [ -n "${head_path[$name]+x}" ]; then
                notes+=("warning: \`$name\` is defined twice: in \`${head_file[$name]}\` and in \`$file\` (line $line); the second is left out")
                continue
            fi
            head_path[$name]=$path head_file[$name]=$file head_status[$name]=$status
            head_order+=("$name")
        else
            if [ -n "${base_path[$name]+x}" ]; then continue; fi
            base_path[$name]=$path base_file[$name]=$file base_status[$name]=$status
            base_order+=("$name")
        fi
    done <"$work/$side/$n/crds.tsv"
}

for i in "${!pair_new[@]}"; do
    n=$((n + 1))
    old=${pair_old[$i]} new=${pair_new[$i]}
    mkdir -p "$work/base/$n" "$work/head/$n"
    if [ -n "$old" ]; then
        copy="$work/base/$n/${old##*/}"
        if git cat-file blob "$from:$old" >"$copy" 2>/dev/null && crd_lib_mentions_crd "$copy"; then
            rename_from+=("$copy")
            rename_to+=("$old@$short_from")
            read_side base "$old" "$copy" "$old@$short_from"
        fi
    fi
    if [ -n "$new" ]; then
        # The work tree's file when it is HEAD's (crd-audit then names the real path), else
        # HEAD's version copied.
        if [ -f "$new" ] && git diff --quiet --no-ext-diff HEAD -- "$new" 2>/dev/null; then
            copy=$new
        else
            copy="$work/head/$n/${new##*/}"
            git cat-file blob "$head_sha:$new" >"$copy"
            rename_from+=("$copy")
            rename_to+=("$new")
        fi
        if crd_lib_mentions_crd "$copy"; then
            read_side head "$new" "$copy" "$new"
        fi
    fi
done

# ---- Objects to plan against.
declare -a object_paths=()
expand() { # PATTERN: its matches, relative to the repository's root (`**` included)
    local IFS='' matched
    shopt -s globstar nullglob
    # shellcheck disable=SC2206 # expanded on purpose (not split: IFS is empty)
    matched=($1)
    shopt -u globstar nullglob
    if [ ${#matched[@]} -gt 0 ]; then printf '%s\0' "${matched[@]}"; fi
}
for pattern in "${objects[@]}"; do
    pattern=${pattern#./}
    if [ -e "$pattern" ]; then
        object_paths+=("$pattern")
        continue
    fi
    found=0
    while IFS= read -r -d '' match; do
        object_paths+=("$match")
        found=1
    done < <(expand "$pattern")
    if [ "$found" = 0 ]; then
        notes+=("warning: objects: \`$pattern\` matches no file")
    fi
done

# ---- Markdown: crd-audit's own (-o markdown), or its text in a code block before it had one.
markdown=false
if "$CRD" diff --help 2>/dev/null | grep -qi 'markdown'; then markdown=true; fi

fenced() { # TITLE FILE: a section holding FILE's text (64 KiB at most)
    local title=$1 file=$2 size
    size=$(wc -c <"$file")
    printf '### %s\n\n````text\n' "$title"
    if [ "$size" -gt 65536 ]; then
        head -c 65536 "$file" | sed '$d'
        printf '\n… (%s bytes more: the whole output is in the output directory)\n' "$((size - 65536))"
    else
        cat "$file"
        if [ "$size" -gt 0 ] && [ -n "$(tail -c 1 "$file")" ]; then echo; fi
    fi
    printf '````\n\n'
}

# Runs crd-audit (rc in $rc); its output to OUT, its errors to ERR.
run_crd() { # OUT ERR ARGS...
    local o=$1 e=$2
    shift 2
    rc=0
    "$CRD" "$@" >"$o" 2>"$e" || rc=$?
}

# The text crd-audit wrote names the temporary copies: those become the repository's paths.
work_tag=${work##*/}
fix_paths() {
    local file=$1 k args=()
    # Only files that name one (the directory's name is never percent-encoded).
    grep -qF -- "$work_tag" "$file" 2>/dev/null || return 0
    for k in "${!rename_from[@]}"; do args+=("${rename_from[$k]}" "${rename_to[$k]}"); done
    crd_lib_replace "$file" "${args[@]}"
}

# Escapes a table cell.
cell() {
    local s=${1//|/\\|}
    printf '%s' "${s//$'\n'/ }"
}

# A GitHub annotation (in a GitHub Actions run).
annotate() { # LEVEL FILE MESSAGE
    [ "${GITHUB_ACTIONS:-}" = true ] || return 0
    local file=$2 msg=$3
    msg=${msg//'%'/'%25'}; msg=${msg//$'\r'/'%0D'}; msg=${msg//$'\n'/'%0A'}
    file=${file//'%'/'%25'}; file=${file//,/'%2C'}; file=${file//:/'%3A'}
    echo "::$1 file=$file,title=crd-audit::$msg"
}

record_error() { # SECTION-FILE TITLE STDERR-FILE
    errors=$((errors + 1))
    fix_paths "$3"
    fenced "$2" "$3" >>"$1"
    echo "error: $2" >&2
    cat "$3" >&2
}

# The table's rows, worst first: RANK<tab>ID<tab>ROW; the sections follow the same order.
declare -a rows=()
row() { # RANK TEXT (for the CRD of $id)
    rows+=("$1"$'\t'"$id"$'\t'"$2")
}
tightened_crds=0 stranded=0 stuck=0 changed=0 added=0 removed=0 failing_checks=0
kv=()
if [ -n "$kube_version" ]; then kv=(--kubernetes-version "$kube_version"); fi
s=0
for name in "${head_order[@]}"; do
    s=$((s + 1))
    id=$(printf '%04d' "$s")
    new_path=${head_path[$name]} new_file=${head_file[$name]}
    section=$out/sections/$id.md
    r=$work/run/$id
    mkdir -p "$r"
    where="\`$(cell "$new_file")\`"
    if [ -n "${base_path[$name]+x}" ] && [ "${base_file[$name]}" != "$new_file" ]; then
        where="$where (moved from \`$(cell "${base_file[$name]}")\`)"
    fi
    if [ "${head_status[$name]}" = list ] || { [ -n "${base_path[$name]+x}" ] && [ "${base_status[$name]}" = list ]; }; then
        notes+=("warning: \`$name\` in \`$new_file\` is one of several CRDs in one document (a List): it is not compared; give each CRD a document of its own")
        row 6 "| \`$name\` | $where | not compared (a List of CRDs) | |"
        continue
    fi
    if [ -z "${base_path[$name]+x}" ]; then
        # A new CRD: checked.
        added=$((added + 1))
        run_crd "$r/check.txt" "$r/check.err" check "${kv[@]}" -- "$new_path"
        if [ "$rc" -gt 1 ]; then
            record_error "$section" "\`$name\`: crd-audit check failed" "$r/check.err"
            row 0 "| \`$name\` | \`$(cell "$new_file")\` | added | **error** |"
            continue
        fi
        "$CRD" check -o sarif "${kv[@]}" -- "$new_path" >"$out/sarif-parts/$id-check.sarif" 2>/dev/null || true
        fix_paths "$out/sarif-parts/$id-check.sarif"
        fix_paths "$r/check.txt"
        if [ "$rc" = 1 ]; then
            failing_checks=$((failing_checks + 1))
            fenced "\`$name\`: new CRD, findings of crd-audit check" "$r/check.txt" >"$section"
            row 2 "| \`$name\` | \`$(cell "$new_file")\` | added | **check findings** |"
            annotate error "$new_file" "$name: the new CRD has findings of crd-audit check"
            echo "$name ($new_file): new, with findings of crd-audit check"
        else
            row 5 "| \`$name\` | \`$(cell "$new_file")\` | added | checked: no findings |"
            echo "$name ($new_file): new, no findings"
        fi
        continue
    fi
    old_path=${base_path[$name]}
    if crd_lib_same "$old_path" "$new_path"; then
        if [ "${base_file[$name]}" != "$new_file" ]; then
            row 6 "| \`$name\` | $where | moved | unchanged |"
        fi
        continue
    fi
    changed=$((changed + 1))
    run_crd "$r/diff.json" "$r/diff.err" diff -o json -- "$old_path" "$new_path"
    if [ "$rc" -gt 1 ]; then
        record_error "$section" "\`$name\`: crd-audit diff failed" "$r/diff.err"
        row 0 "| \`$name\` | $where | modified | **error** |"
        continue
    fi
    # One JSON line a change, its class a key of its own (a quote in a reason is escaped).
    t=$(grep -c '"class":"tightening"' "$r/diff.json" || true)
    l=$(grep -c '"class":"loosening"' "$r/diff.json" || true)
    u=$(grep -c '"class":"neutral"' "$r/diff.json" || true)
    result="$t tightening, $l loosening, $u neutral"
    if [ "$t" -gt 0 ]; then
        tightened_crds=$((tightened_crds + 1))
        result="**$t tightening**, $l loosening, $u neutral"
        annotate warning "$new_file" "$name tightens: $t change(s) may make stored objects invalid (crd-audit diff)"
    fi
    if [ $((t + l + u)) -eq 0 ]; then
        row 6 "| \`$name\` | $where | modified | no schema change |"
        echo "$name ($new_file): no schema change"
        continue
    fi
    : >"$section"
    if [ "$markdown" = true ]; then
        run_crd "$r/diff.md" "$r/diff-md.err" diff -o markdown -- "$old_path" "$new_path"
        if [ "$rc" -gt 1 ]; then
            record_error "$section" "\`$name\`: crd-audit diff -o markdown failed" "$r/diff-md.err"
        else
            fix_paths "$r/diff.md"
            { cat "$r/diff.md"; echo; } >>"$section"
        fi
    else
        "$CRD" diff -- "$old_path" "$new_path" >"$r/diff.txt" 2>&1 || true
        fix_paths "$r/diff.txt"
        fenced "\`$name\`: schema changes (crd-audit diff)" "$r/diff.txt" >>"$section"
    fi
    "$CRD" diff -o sarif -- "$old_path" "$new_path" >"$out/sarif-parts/$id-diff.sarif" 2>/dev/null || true
    fix_paths "$out/sarif-parts/$id-diff.sarif"
    newly=0 plan_failed=false
    if [ ${#object_paths[@]} -gt 0 ]; then
        plan=("${kv[@]}" --current "$old_path" --objects "${object_paths[@]}" -- "$new_path")
        run_crd "$r/plan.json" "$r/plan.err" plan -o json "${plan[@]}"
        if [ "$rc" -gt 1 ]; then
            record_error "$section" "\`$name\`: crd-audit plan failed" "$r/plan.err"
            result="$result; plan: **error**"
            plan_failed=true
        else
            read -r _ _ _ newly stk already judged < <(crd_lib_docs counts "$r/diff.json" "$r/plan.json")
            stranded=$((stranded + newly))
            stuck=$((stuck + stk))
            if [ "$newly" -gt 0 ]; then
                result="$result; **$newly of $judged objects become invalid** ($stk stuck)"
                annotate error "$new_file" "$name: $newly of $judged example objects become invalid ($stk stuck) (crd-audit plan)"
            else
                result="$result; no object becomes invalid ($judged judged)"
            fi
            if [ "$already" -gt 0 ]; then result="$result, $already already invalid"; fi
            if [ "$markdown" = true ]; then
                run_crd "$r/plan.md" "$r/plan-md.err" plan -o markdown "${plan[@]}"
                if [ "$rc" -gt 1 ]; then
                    record_error "$section" "\`$name\`: crd-audit plan -o markdown failed" "$r/plan-md.err"
                else
                    fix_paths "$r/plan.md"
                    { cat "$r/plan.md"; echo; } >>"$section"
                fi
            else
                "$CRD" plan "${plan[@]}" >"$r/plan.txt" 2>&1 || true
                fix_paths "$r/plan.txt"
                fenced "\`$name\`: objects (crd-audit plan)" "$r/plan.txt" >>"$section"
            fi
            "$CRD" plan -o sarif "${plan[@]}" >"$out/sarif-parts/$id-plan.sarif" 2>/dev/null || true
            fix_paths "$out/sarif-parts/$id-plan.sarif"
        fi
    fi
    rank=4
    if [ "$t" -gt 0 ]; then rank=2; fi
    if [ "${newly:-0}" -gt 0 ]; then rank=1; fi
    if [ "$plan_failed" = true ]; then rank=0; fi
    row "$rank" "| \`$name\` | $where | modified | $result |"
    echo "$name ($new_file): ${result//\*/}"
done

# CRDs of the base that HEAD no longer has.
for name in "${base_order[@]}"; do
    if [ -n "${head_path[$name]+x}" ]; then continue; fi
    removed=$((removed + 1))
    file=${base_file[$name]}
    if git cat-file -e "$head_sha:$file" 2>/dev/null; then
        how="removed from \`$(cell "$file")\`"
    else
        how="\`$(cell "$file")\` deleted"
    fi
    id=removed-$removed
    row 3 "| \`$name\` | \`$(cell "$file")\` | **removed** | $how: applied with pruning, the CRD and all its objects are deleted |"
    annotate warning "$file" "$name is removed: applied with pruning, the CRD and every object of it are deleted"
    echo "$name ($file): removed"
done

# ---- SARIF: one log for upload.
shopt -s nullglob
parts=("$out"/sarif-parts/*.sarif)
shopt -u nullglob
if ! crd_lib_docs sarif-merge "$out/sarif/crd-audit.sarif" "${parts[@]}"; then
    errors=$((errors + 1))
    notes+=("error: some SARIF logs of crd-audit could not be read (see the log)")
fi

# ---- The summary.
summary=$out/summary.md
: >"$work/rows"
if [ ${#rows[@]} -gt 0 ]; then printf '%s\n' "${rows[@]}" | sort -t $'\t' -k1,1n -k2,2 >"$work/rows"; fi
{
    echo "## crd-audit: CRD changes"
    echo
    echo "\`$short_head\` (HEAD) compared with \`$short_from\` (\`$(cell "$base")\`): $((changed + added + removed)) CRD(s) changed: $tightened_crds tightened, $added added, $removed removed; $stranded example object(s) become invalid ($stuck stuck)."
    echo
    if [ ${#rows[@]} -gt 0 ]; then
        echo "| CRD | File | Change | Result |"
        echo "|---|---|---|---|"
        max_rows=500
        k=0
        while IFS=$'\t' read -r _ _ text; do
            k=$((k + 1))
            if [ "$k" -gt "$max_rows" ]; then
                echo
                echo "… and $(( ${#rows[@]} - max_rows )) more CRD(s)."
                break
            fi
            echo "$text"
        done <"$work/rows"
        echo
    else
        echo "No CRD changed."
        echo
    fi
    for note in "${notes[@]}"; do
        echo "- $note"
    done
    if [ ${#notes[@]} -gt 0 ]; then echo; fi
} >"$summary"
sections=()
while IFS=$'\t' read -r _ id _; do
    if [ -s "$out/sections/$id.md" ]; then sections+=("$out/sections/$id.md"); fi
done <"$work/rows"
reserve=512
left_out=0
for section in "${sections[@]}"; do
    size=$(wc -c <"$section")
    have=$(wc -c <"$summary")
    if [ "$left_out" -gt 0 ] || [ $((have + size + reserve)) -gt "$limit" ]; then
        left_out=$((left_out + 1))
        continue
    fi
    cat "$section" >>"$summary"
done
if [ "$left_out" -gt 0 ]; then
    printf '\n> [!NOTE]\n> %s more section(s) left out: a step summary holds at most %s bytes. Every section is in %s (the output directory).\n' \
        "$left_out" "$limit" "\`$out/sections\`" >>"$summary"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$summary" >>"$GITHUB_STEP_SUMMARY"; fi

tightened=false
if [ "$tightened_crds" -gt 0 ] || [ "$removed" -gt 0 ]; then tightened=true; fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    delimiter="crd_audit_$(date +%s%N)_$RANDOM"
    {
        echo "tightened=$tightened"
        echo "stranded=$stranded"
        echo "stuck=$stuck"
        echo "changed=$changed"
        echo "added=$added"
        echo "removed=$removed"
        echo "errors=$errors"
        for kvp in "summary-file=$summary" "sarif-dir=$out/sarif" "sarif-file=$out/sarif/crd-audit.sarif"; do
            printf '%s<<%s\n%s\n%s\n' "${kvp%%=*}" "$delimiter" "${kvp#*=}" "$delimiter"
        done
    } >>"$GITHUB_OUTPUT"
fi

echo "summary: $changed changed, $added added, $removed removed CRD(s); $tightened_crds tightened; $stranded object(s) become invalid ($stuck stuck); $errors error(s); $summary"
if [ "$errors" -gt 0 ]; then
    echo "error: $errors error(s) (see above and $summary)" >&2
    exit 2
fi
fail=false
case $fail_on in
    tightening)
        if [ "$tightened" = true ] || [ "$stranded" -gt 0 ] || [ "$failing_checks" -gt 0 ]; then fail=true; fi ;;
    invalid)
        if [ "$stranded" -gt 0 ] || [ "$failing_checks" -gt 0 ]; then fail=true; fi ;;
esac
if [ "$fail" = true ]; then
    echo "crd-audit: the change fails (fail-on: $fail_on): $tightened_crds CRD(s) tighten, $removed removed, $stranded object(s) become invalid, $failing_checks new CRD(s) with findings" >&2
    exit 1
fi
exit 0
