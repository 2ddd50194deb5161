// Build test: __managed__ gives a variable storage in managed memory; a reference has no storage
// of its own to place there, so nvcc refuses this file.
__device__ __managed__ int value;
__device__ __managed__ int& alias = value;
