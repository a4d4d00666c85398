# The gRPC frontend of `kiln serve` (proto/kserve/grpc_service.proto, src/serve/grpc_frontend.cpp).
# Optional: with Debian's libgrpc++-dev and protobuf-compiler-grpc installed, the protocol's C++
# code is generated here and kiln_serve is built with KILN_HAVE_GRPC=1; without them kiln still
# builds, and `kiln serve --grpc-port` answers that this build has no gRPC.
# Included from the top-level CMakeLists.txt after kiln_serve is defined.
find_package(gRPC CONFIG QUIET)
find_program(KILN_GRPC_CPP_PLUGIN grpc_cpp_plugin)
if(NOT gRPC_FOUND OR NOT KILN_GRPC_CPP_PLUGIN)
  message(STATUS "gRPC not found (libgrpc++-dev, protobuf-compiler-grpc): kiln serve without gRPC")
  set(KILN_GRPC OFF)
  return()
endif()
set(KILN_GRPC ON)
message(STATUS "gRPC ${gRPC_VERSION}: kiln serve with the KServe v2 gRPC frontend")

set(_kiln_proto ${CMAKE_CURRENT_SOURCE_DIR}/proto/kserve/grpc_service.proto)
# Also the Python messages (grpc_service_pb2.py), for Python clients in the tests: with
# python3-grpcio they call channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
# ...) with these classes' SerializeToString/FromString, no grpc_tools needed.
set(_kiln_gen ${CMAKE_BINARY_DIR}/proto/kserve)
set(_kiln_grpc_sources ${_kiln_gen}/grpc_service.pb.cc ${_kiln_gen}/grpc_service.grpc.pb.cc)
add_custom_command(
  OUTPUT ${_kiln_grpc_sources} ${_kiln_gen}/grpc_service.pb.h ${_kiln_gen}/grpc_service.grpc.pb.h
    ${_kiln_gen}/grpc_service_pb2.py
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_kiln_gen}
  COMMAND protobuf::protoc -I ${CMAKE_CURRENT_SOURCE_DIR}/proto/kserve
    --cpp_out=${_kiln_gen} --grpc_out=${_kiln_gen} --python_out=${_kiln_gen}
    --plugin=protoc-gen-grpc=${KILN_GRPC_CPP_PLUGIN} ${_kiln_proto}
  DEPENDS ${_kiln_proto}
  COMMENT "Generating the KServe v2 gRPC code"
  VERBATIM)
add_library(kiln_grpc_proto STATIC ${_kiln_grpc_sources})
# Generated code is not ours to warn about.
target_compile_options(kiln_grpc_proto PRIVATE -w)
target_include_directories(kiln_grpc_proto PUBLIC ${CMAKE_BINARY_DIR}/proto)
target_link_libraries(kiln_grpc_proto PUBLIC gRPC::grpc++ protobuf::libprotobuf)

target_link_libraries(kiln_serve PUBLIC kiln_grpc_proto)
target_compile_definitions(kiln_serve PUBLIC KILN_HAVE_GRPC=1)
