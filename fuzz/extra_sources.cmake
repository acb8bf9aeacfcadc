# The parsers of components outside libidmint that a fuzz harness calls,
# compiled into the harness itself and into its replay program
# (tests/CMakeLists.txt), so that neither needs the component's client
# library: IDM_FUZZ_EXTRA_<harness> lists them. A new one is one line here.
set(IDM_FUZZ_EXTRA_fuzz_sqlite_uuid ${PROJECT_SOURCE_DIR}/sqlite/uuid_text.c)
set(IDM_FUZZ_EXTRA_fuzz_udf_config ${PROJECT_SOURCE_DIR}/mariadb/udf_config.c)
set(IDM_FUZZ_EXTRA_fuzz_fault_reply ${PROJECT_SOURCE_DIR}/tests/faults/reply.c)
