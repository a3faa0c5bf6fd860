# Writes OUT (a one-line header) with the git revision of SRC at build time, "+dirty" when tracked files
# differ from HEAD and "unknown" outside a checkout. Run on every build by the moxlab_git_revision target;
# OUT is rewritten only when the revision changes, so an unchanged tree recompiles nothing.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    set(rev "${rev}+dirty")
  endif()
endif()
set(content "#define MOXLAB_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
