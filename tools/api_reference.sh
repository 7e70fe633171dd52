#!/usr/bin/env bash
# The API reference: Doxygen (Debian's doxygen package) over framework/include/grove, two passes,
# every warning an error (ctest: grove_api_reference).
#   1. every public header (doc/Doxyfile): each public class and function listed with its
#      signature, the HTML written; a malformed doc comment or a broken reference fails.
#   2. the headers of doc/api_documented.txt alone, with EXTRACT_ALL=NO and WARN_IF_UNDOCUMENTED:
#      an undocumented public entity in them fails; and every public header must be in that list.
#      (`detail` and `kernel` namespaces are left out, doc/Doxyfile's EXCLUDE_SYMBOLS.)
# Output: ${GROVE_DOXYGEN_OUT:-build/doc/api}/html/index.html
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v doxygen > /dev/null || { echo "api_reference: no doxygen (apt-get install doxygen)" >&2; exit 1; }
export GROVE_SOURCE_DIR=$PWD
export GROVE_DOXYGEN_OUT=${GROVE_DOXYGEN_OUT:-$PWD/build/doc/api}
GROVE_VERSION=$(sed -n 's/^project(grove VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
export GROVE_VERSION
mkdir -p "$GROVE_DOXYGEN_OUT/coverage"

doxygen doc/Doxyfile
echo "api_reference: every header: no warning ($GROVE_DOXYGEN_OUT/html/index.html)"

documented=()
while read -r header; do
  [[ -z $header || $header == \#* ]] && continue
  [[ -f framework/include/$header ]] || { echo "api_reference: doc/api_documented.txt names $header, which does not exist" >&2; exit 1; }
  documented+=("$GROVE_SOURCE_DIR/framework/include/$header")
done < doc/api_documented.txt
# Every public header is in the list: a new header comes documented, or CI says which one is not.
unlisted=()
while read -r header; do
  grep -qxF "$header" doc/api_documented.txt || unlisted+=("$header")
done < <(cd framework/include && find grove \( -name '*.hpp' -o -name '*.h' -o -name '*.cuh' \) | sort)
if ((${#unlisted[@]})); then
  printf 'api_reference: not in doc/api_documented.txt (document it member by member, then list it): %s\n' "${unlisted[@]}" >&2
  exit 1
fi
{
  cat doc/Doxyfile
  echo "INPUT = ${documented[*]} $GROVE_SOURCE_DIR/doc/api_namespaces.dox"
  echo "USE_MDFILE_AS_MAINPAGE ="
  echo "EXTRACT_ALL = NO"
  echo "GENERATE_HTML = NO"
  echo "GENERATE_XML = YES"  # some output is required; XML is the cheapest
  echo "OUTPUT_DIRECTORY = $GROVE_DOXYGEN_OUT/coverage"
} | doxygen -
echo "api_reference: all ${#documented[@]} public headers documented member by member (doc/api_documented.txt): no undocumented entity"
