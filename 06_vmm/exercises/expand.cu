// Exercise ex06_expand (chapter 06_vmm): the two VMM steps of an expandable segment.
//
// An expandable segment (the `fragmentation` section of this chapter) is an allocator on one
// range of addresses reserved for its whole budget. Its blocks lie one after another from the
// start of the range, and physical memory is mapped behind them in chunks of the granularity,
// as far as the last block in use reaches and no further: it grows when a block is added at the
// end and shrinks when the last one is freed. The check holds the segment (the reservation, the
// blocks, the handles of the chunks mapped); you write the two steps it calls:
//   grow():   one more chunk of physical memory, mapped right after the chunks already mapped,
//             and made accessible to the device;
//   shrink(): the last chunk unmapped and its handle released, so that the driver frees its
//             memory; the addresses stay reserved.
// As given, grow() maps nothing, so the segment refuses every block it cannot fit.
//
// The check (exercises/check/expand.cu) replays a training step's allocations (growing outputs,
// kept, and workspaces, freed) within a budget of at most 256 MiB, then asks for a quarter of
// the budget at once, and passes when
//   - the segment serves every allocation and the large request,
//   - every block in use reads its values back at the address it was handed out at,
//   - after every event, the device memory taken (cudaMemGetInfo) exceeds the bytes in use by
//     at most one chunk,
//   - and once the segment is gone, every byte of it is back.
// Run it: cmake --build build --target ex06_expand && ./build/bin/ex06_expand
//    or:  ctest --preset exercise -R 06_vmm
#include "common/check.hpp"
#include "common/driver.hpp"

#include <cuda.h>

#include <cstddef>

// Grow. `end` is the address right after the last chunk mapped: reserved, with nothing behind
// it. `chunk` is the granularity, the size of every chunk; `prop` says what memory to create
// (device memory of GPU prop.location.id). Returns the new chunk's handle (0: nothing mapped).
CUmemGenericAllocationHandle grow(CUdeviceptr end, std::size_t chunk,
                                  const CUmemAllocationProp& prop) {
    // TODO 1: cuMemCreate a chunk of `chunk` bytes with `prop`, and cuMemMap it at `end`
    //         (offset 0, the whole chunk).
    // TODO 2: cuMemSetAccess for that chunk: read and write for the device of prop.location
    //         (a CUmemAccessDesc; a new mapping starts with no access at all).
    // TODO 3: return the handle, which shrink() will release.
    // Driver functions come from DRIVER_FUNCTION, as in the section:
    //   const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
    (void)end;
    (void)chunk;
    (void)prop;
    return 0;
}

// Shrink. The last chunk mapped starts at `last`; `handle` is what grow() returned for it.
void shrink(CUdeviceptr last, std::size_t chunk, CUmemGenericAllocationHandle handle) {
    // TODO 4: cuMemUnmap the chunk (a whole mapping at a time), then cuMemRelease its handle:
    //         with no mapping and no handle left, the driver frees the memory.
    (void)last;
    (void)chunk;
    (void)handle;
}
