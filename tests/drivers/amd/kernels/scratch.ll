; scratch.ll: a 512-byte private array indexed by a kernel argument, so it stays in scratch
; (private segment) memory instead of registers.
declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @private_array(ptr addrspace(1) %out, i32 %n) #0 {
  %arr = alloca [128 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %i = phi i32 [ 0, %0 ], [ %i.next, %fill ]
  %p = getelementptr [128 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %x = mul i32 %i, %tid
  store volatile i32 %x, ptr addrspace(5) %p
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, 128
  br i1 %done, label %read, label %fill
read:
  %k = urem i32 %n, 128
  %pk = getelementptr [128 x i32], ptr addrspace(5) %arr, i32 0, i32 %k
  %v = load volatile i32, ptr addrspace(5) %pk
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %po
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,64" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
