// Chapter 06: Virtual memory management: create, reserve, map, access, grow, alias
#include "sections.hpp"

int main(int argc, char** argv) {
    const tutorial::Chapter chapter{
        "06_vmm",
        "Virtual memory management: create, reserve, map, access, grow, alias",
        {
            {"properties", "VMM support and allocation granularity, from the driver API",
             run_properties},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
