// Build test: managed variables live for the whole program, at namespace scope. One declared
// inside a kernel, like an automatic variable, is refused by nvcc.
__global__ void kernel(int* out) {
    __managed__ int scratch;
    scratch = 1;
    *out = scratch;
}
