// The one source file of the targets that only build a precompiled header
// (cmake/DfmpcPrecompiledHeaders.cmake): CMake needs a source to attach the
// header to, and this one adds nothing else.
