// Build test (control): a managed variable used the way the Unified Memory appendix allows. This
// file must compile, which shows that the compiler and its flags work and that each refusal in the
// other files of this folder comes from the one rule that file breaks.
__device__ __managed__ int counter;

__global__ void count_up() {
    atomicAdd(&counter, 1);
}

int read_counter() {
    return counter;
}
