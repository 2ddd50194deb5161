// Build test: constant memory is set before kernels run and never migrates, so a __constant__
// variable cannot also be __managed__. nvcc refuses this file.
__constant__ __managed__ float table[4];
