#pragma once
// A program's own PM configuration, as an FDPS user edits it: a mesh size unlike grove's default,
// so fdps_pm_include_program can tell which param_fdps.h the particle mesh obeyed.
#define SIZE_OF_MESH (16)
