; fill.ll: out[i] = i * scale + offset for i < count, the 64 work-items of one workgroup striding
; through the buffer; the AM driver tests' dispatch (tests/drivers/amd/am_dispatch.hpp).
declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @fill(ptr addrspace(1) %out, i32 %count, i32 %scale, i32 %offset) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %any = icmp ult i32 %tid, %count
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ %tid, %entry ], [ %i.next, %loop ]
  %m = mul i32 %i, %scale
  %v = add i32 %m, %offset
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v, ptr addrspace(1) %p
  %i.next = add i32 %i, 64
  %more = icmp ult i32 %i.next, %count
  br i1 %more, label %loop, label %done
done:
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,64" "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-hostcall-ptr" "amdgpu-no-heap-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-lds-kernel-id" }
