; lds.ll: reverses a 256-float tile through LDS (group segment: 1024 bytes).
@tile = internal addrspace(3) global [256 x float] poison, align 4

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @reverse_tile(ptr addrspace(1) %out, ptr addrspace(1) %in) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pi = getelementptr float, ptr addrspace(1) %in, i32 %tid
  %v = load float, ptr addrspace(1) %pi
  %pl = getelementptr [256 x float], ptr addrspace(3) @tile, i32 0, i32 %tid
  store float %v, ptr addrspace(3) %pl
  call void @llvm.amdgcn.s.barrier()
  %rev = sub i32 255, %tid
  %pr = getelementptr [256 x float], ptr addrspace(3) @tile, i32 0, i32 %rev
  %w = load float, ptr addrspace(3) %pr
  %po = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float %w, ptr addrspace(1) %po
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
