; globals.ll: a kernel that reads module globals, so the code object carries relocations: ld.lld
; leaves R_AMDGPU_ABS64 (global symbol) and R_AMDGPU_RELATIVE64 (local symbol) in .rela.dyn for
; the pointer table, and llc's object has REL32_LO/HI and GOTPCREL32_LO/HI in .rela.text.
; Its arguments mix 4- and 8-byte scalars to exercise the kernarg alignment.
@lut = internal addrspace(4) constant [8 x i32] [i32 1, i32 2, i32 3, i32 5, i32 8, i32 13, i32 21, i32 34], align 4
@shared_data = addrspace(1) global [4 x i32] [i32 100, i32 200, i32 300, i32 400], align 4
@local_data = internal addrspace(1) global [4 x i32] [i32 7, i32 7, i32 7, i32 7], align 4
@ptrs = addrspace(4) constant [2 x ptr addrspace(1)] [ptr addrspace(1) @shared_data, ptr addrspace(1) @local_data], align 8

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @lookup(i32 %bias, ptr addrspace(1) %out, i64 %stride, i32 %which) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %k = and i32 %tid, 7
  %p = getelementptr [8 x i32], ptr addrspace(4) @lut, i32 0, i32 %k
  %v = load i32, ptr addrspace(4) %p
  %w = and i32 %which, 1
  %pp = getelementptr [2 x ptr addrspace(1)], ptr addrspace(4) @ptrs, i32 0, i32 %w
  %d = load ptr addrspace(1), ptr addrspace(4) %pp
  %x = load i32, ptr addrspace(1) %d
  %s0 = add i32 %v, %x
  %s = add i32 %s0, %bias
  %t = zext i32 %tid to i64
  %o = mul i64 %t, %stride
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %o
  store i32 %s, ptr addrspace(1) %po
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,64" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
