# Fails with a clear message unless MVISION_LIB_DIR holds both prebuilt libraries. Used at
# configure time (MVISION_CARGO_BUILD=OFF), after the cargo build, and at install time.
foreach(_mvision_lib libmvision.a libmvision.so)
  if(NOT EXISTS "${MVISION_LIB_DIR}/${_mvision_lib}")
    message(FATAL_ERROR
      "mvision: ${MVISION_LIB_DIR}/${_mvision_lib} does not exist.\n"
      "Build the Rust library first (cargo build --release -p mvision-ffi, or 'cmake --build' "
      "with -DMVISION_CARGO_BUILD=ON), or point -DMVISION_LIB_DIR=<dir> at the directory that "
      "holds libmvision.a and libmvision.so.")
  endif()
endforeach()
