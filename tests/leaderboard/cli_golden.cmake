# The CLI on the golden records: `leaderboard`, `compare` (and its exit codes), `seal` (the
# committed reported records must be what sealing their sources gives) and `validate`.
# Run by ctest (leaderboard.cli_golden) with -DMTABENCH -DGOLDEN -DSOURCE_DIR -DWORK.
cmake_minimum_required(VERSION 3.24)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run expected_rc)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${GOLDEN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected_rc)
    message(FATAL_ERROR "exit ${rc}, expected ${expected_rc}: ${ARGN}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endfunction()

# A usage error: neither 0 (fine) nor 1 (a regression). CLI11's parse errors exit with its own
# codes (105 for a failed check, 106 for a missing argument); input errors found later exit 2.
function(run_usage_error)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${GOLDEN} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0 OR rc EQUAL 1)
    message(FATAL_ERROR "exit ${rc}, expected a usage error (>= 2): ${ARGN}")
  endif()
endfunction()

function(same golden actual)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${golden} ${actual} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${actual} differs from the golden ${golden}")
  endif()
endfunction()

# leaderboard: the three outputs as golden.
run(0 ${MTABENCH} leaderboard records --out ${WORK}/lb --now 2025-06-01T00:00:00Z --baseline cudnn)
foreach(f leaderboard.json LEADERBOARD.md index.html)
  same(${GOLDEN}/expected/${f} ${WORK}/lb/${f})
endforeach()
if(NOT EXISTS ${WORK}/lb/plots/scaling-2.svg)
  message(FATAL_ERROR "no plots/scaling-2.svg beside LEADERBOARD.md")
endif()
run(2 ${MTABENCH} leaderboard no-such-folder --out ${WORK}/lb2)
run(2 ${MTABENCH} leaderboard records --out ${WORK}/lb2 --now yesterday)

# compare: golden Markdown and JSON; exit 1 (a slower and a failing case); A/A exits 0; bad input 2.
run(1 ${MTABENCH} compare compare/base.jsonl compare/new.jsonl --out ${WORK}/compare.md)
same(${GOLDEN}/expected/compare.md ${WORK}/compare.md)
run(1 ${MTABENCH} compare compare/base.jsonl compare/new.jsonl --format json --out ${WORK}/compare.json)
same(${GOLDEN}/expected/compare.json ${WORK}/compare.json)
run(0 ${MTABENCH} compare compare/base.jsonl compare/base.jsonl --out ${WORK}/aa.md)
# A newly failing case is a regression whatever the threshold.
run(1 ${MTABENCH} compare compare/base.jsonl compare/new.jsonl --threshold 1000 --out ${WORK}/lenient.md)
run(2 ${MTABENCH} compare no-such-file.jsonl compare/new.jsonl)
run_usage_error(${MTABENCH} compare compare/base.jsonl compare/new.jsonl --format yaml)
run_usage_error(${MTABENCH} compare compare/base.jsonl)

# seal: the committed reported records are exactly their sealed sources; they validate.
file(GLOB sources ${SOURCE_DIR}/results/reported/sources/*.json)
run(0 ${MTABENCH} seal ${sources} --datasheet-floor --out ${WORK}/reported.jsonl)
same(${SOURCE_DIR}/results/reported/rtx3090-leaderboard-page.jsonl ${WORK}/reported.jsonl)
run(0 ${MTABENCH} validate ${SOURCE_DIR}/results/reported/rtx3090-leaderboard-page.jsonl)

# seal refuses a sealed record edited afterwards (unless --reseal); validate rejects it.
file(READ ${GOLDEN}/records/leaderboard.jsonl all)
string(FIND "${all}" "\n" eol)
string(SUBSTRING "${all}" 0 ${eol} first)
string(REPLACE "golden01" "tampered" edited "${first}")
file(WRITE ${WORK}/edited.json "${edited}")
run(1 ${MTABENCH} validate ${WORK}/edited.json)
run(2 ${MTABENCH} seal ${WORK}/edited.json --out ${WORK}/edited.jsonl)
run(0 ${MTABENCH} seal ${WORK}/edited.json --reseal --out ${WORK}/edited.jsonl)
run(0 ${MTABENCH} validate ${WORK}/edited.jsonl)
