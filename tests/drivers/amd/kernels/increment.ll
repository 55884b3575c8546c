; increment.ll: work-item 0 adds one to the 32-bit counter its first argument points at; the
; kernel the AM driver's queue tests dispatch (tests/drivers/amd/am_kernel.hpp).
declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @increment(ptr addrspace(1) %counter) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %add, label %done
add:
  %v = load i32, ptr addrspace(1) %counter
  %v1 = add i32 %v, 1
  store i32 %v1, ptr addrspace(1) %counter
  br label %done
done:
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,64" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
