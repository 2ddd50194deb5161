// Build test: a managed variable is memory both processors may write; a const-qualified type
// contradicts that, so nvcc refuses this file.
__device__ __managed__ const int limit = 10;
